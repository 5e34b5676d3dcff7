"""libcst 1.9.0's node classes, mirrored: written by ``tools/generate_mirror.py``, do not edit.

Same names, bases, fields (in order) and defaults as libcst's; see
:mod:`leaklint.analysis.mirror_base` for why and for what every class shares.
``_child_fields`` is :func:`leaklint.analysis.walk._child_fields` of the libcst class, worked out
here so that the walk needs no type hints at run time.
"""

# fmt: off
# ruff: noqa
from leaklint.analysis.mirror_base import CSTNode, ConcatenatedValue, LiteralValue, MaybeSentinel, ModuleMethods

LIBCST_VERSION = '1.9.0'


class BaseBinaryOp(CSTNode):
    __slots__ = ()


class _BaseOneTokenOp(CSTNode):
    __slots__ = ()


class BaseParenthesizableWhitespace(CSTNode):
    __slots__ = ()


class BaseLeaf(CSTNode):
    __slots__ = ()


class BaseValueToken(BaseLeaf):
    __slots__ = ()


def _init_0(self, value):
    self.value = value


class SimpleWhitespace(BaseParenthesizableWhitespace, BaseValueToken):
    __slots__ = _fields = ('value',)
    _child_fields = ()
    __init__ = _init_0


_DEFAULT_0 = SimpleWhitespace(value=' ')


def _init_1(self, whitespace_before=_DEFAULT_0, whitespace_after=_DEFAULT_0):
    self.whitespace_before = whitespace_before
    self.whitespace_after = whitespace_after


class Add(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class BaseAugOp(CSTNode):
    __slots__ = ()


class AddAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class BaseBooleanOp(_BaseOneTokenOp):
    __slots__ = ()


class And(BaseBooleanOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class BaseSmallStatement(CSTNode):
    __slots__ = ()


def _init_2(self, target, annotation, value=None, equal=MaybeSentinel.DEFAULT, semicolon=MaybeSentinel.DEFAULT):
    self.target = target
    self.annotation = annotation
    self.value = value
    self.equal = equal
    self.semicolon = semicolon


class AnnAssign(BaseSmallStatement):
    __slots__ = _fields = ('target', 'annotation', 'value', 'equal', 'semicolon')
    _child_fields = (('target', 2), ('annotation', 2), ('value', 2))
    __init__ = _init_2


def _init_3(self, annotation, whitespace_before_indicator=MaybeSentinel.DEFAULT, whitespace_after_indicator=_DEFAULT_0):
    self.annotation = annotation
    self.whitespace_before_indicator = whitespace_before_indicator
    self.whitespace_after_indicator = whitespace_after_indicator


class Annotation(CSTNode):
    __slots__ = _fields = ('annotation', 'whitespace_before_indicator', 'whitespace_after_indicator')
    _child_fields = (('annotation', 2),)
    __init__ = _init_3


_DEFAULT_1 = SimpleWhitespace(value='')


def _init_4(self, value, keyword=None, equal=MaybeSentinel.DEFAULT, comma=MaybeSentinel.DEFAULT, star='', whitespace_after_star=_DEFAULT_1, whitespace_after_arg=_DEFAULT_1):
    self.value = value
    self.keyword = keyword
    self.equal = equal
    self.comma = comma
    self.star = star
    self.whitespace_after_star = whitespace_after_star
    self.whitespace_after_arg = whitespace_after_arg


class Arg(CSTNode):
    __slots__ = _fields = ('value', 'keyword', 'equal', 'comma', 'star', 'whitespace_after_star', 'whitespace_after_arg')
    _child_fields = (('value', 2), ('keyword', 2))
    __init__ = _init_4


def _init_5(self, name, whitespace_before_as=_DEFAULT_0, whitespace_after_as=_DEFAULT_0):
    self.name = name
    self.whitespace_before_as = whitespace_before_as
    self.whitespace_after_as = whitespace_after_as


class AsName(CSTNode):
    __slots__ = _fields = ('name', 'whitespace_before_as', 'whitespace_after_as')
    _child_fields = (('name', 2),)
    __init__ = _init_5


def _init_6(self, test, msg=None, comma=MaybeSentinel.DEFAULT, whitespace_after_assert=_DEFAULT_0, semicolon=MaybeSentinel.DEFAULT):
    self.test = test
    self.msg = msg
    self.comma = comma
    self.whitespace_after_assert = whitespace_after_assert
    self.semicolon = semicolon


class Assert(BaseSmallStatement):
    __slots__ = _fields = ('test', 'msg', 'comma', 'whitespace_after_assert', 'semicolon')
    _child_fields = (('test', 2), ('msg', 2))
    __init__ = _init_6


def _init_7(self, targets, value, semicolon=MaybeSentinel.DEFAULT):
    self.targets = targets
    self.value = value
    self.semicolon = semicolon


class Assign(BaseSmallStatement):
    __slots__ = _fields = ('targets', 'value', 'semicolon')
    _child_fields = (('targets', 1), ('value', 2))
    __init__ = _init_7


class AssignEqual(_BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


def _init_8(self, target, whitespace_before_equal=_DEFAULT_0, whitespace_after_equal=_DEFAULT_0):
    self.target = target
    self.whitespace_before_equal = whitespace_before_equal
    self.whitespace_after_equal = whitespace_after_equal


class AssignTarget(CSTNode):
    __slots__ = _fields = ('target', 'whitespace_before_equal', 'whitespace_after_equal')
    _child_fields = (('target', 2),)
    __init__ = _init_8


def _init_9(self, whitespace_after=_DEFAULT_0):
    self.whitespace_after = whitespace_after


class Asynchronous(CSTNode):
    __slots__ = _fields = ('whitespace_after',)
    _child_fields = ()
    __init__ = _init_9


class _BaseParenthesizedNode(CSTNode):
    __slots__ = ()


class BaseExpression(_BaseParenthesizedNode):
    __slots__ = ()


class BaseAssignTargetExpression(BaseExpression):
    __slots__ = ()


class BaseDelTargetExpression(BaseExpression):
    __slots__ = ()


def _init_10(self, whitespace_before=_DEFAULT_1, whitespace_after=_DEFAULT_1):
    self.whitespace_before = whitespace_before
    self.whitespace_after = whitespace_after


class Dot(_BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_10


_DEFAULT_2 = Dot()


def _init_11(self, value, attr, dot=_DEFAULT_2, lpar=(), rpar=()):
    self.value = value
    self.attr = attr
    self.dot = dot
    self.lpar = lpar
    self.rpar = rpar


class Attribute(BaseAssignTargetExpression, BaseDelTargetExpression):
    __slots__ = _fields = ('value', 'attr', 'dot', 'lpar', 'rpar')
    _child_fields = (('value', 2), ('attr', 2))
    __init__ = _init_11


def _init_12(self, target, operator, value, semicolon=MaybeSentinel.DEFAULT):
    self.target = target
    self.operator = operator
    self.value = value
    self.semicolon = semicolon


class AugAssign(BaseSmallStatement):
    __slots__ = _fields = ('target', 'operator', 'value', 'semicolon')
    _child_fields = (('target', 2), ('value', 2))
    __init__ = _init_12


def _init_13(self, expression, lpar=(), rpar=(), whitespace_after_await=_DEFAULT_0):
    self.expression = expression
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_after_await = whitespace_after_await


class Await(BaseExpression):
    __slots__ = _fields = ('expression', 'lpar', 'rpar', 'whitespace_after_await')
    _child_fields = (('expression', 2),)
    __init__ = _init_13


class BaseComp(BaseExpression):
    __slots__ = ()


class BaseCompOp(CSTNode):
    __slots__ = ()


class BaseStatement(CSTNode):
    __slots__ = ()


class BaseCompoundStatement(BaseStatement):
    __slots__ = ()


class _BaseSetOrDict(BaseExpression):
    __slots__ = ()


class BaseDict(_BaseSetOrDict):
    __slots__ = ()


class _BaseElementImpl(CSTNode):
    __slots__ = ()


class BaseDictElement(_BaseElementImpl):
    __slots__ = ()


class BaseElement(_BaseElementImpl):
    __slots__ = ()


class BaseFormattedStringContent(CSTNode):
    __slots__ = ()


class BaseList(BaseExpression):
    __slots__ = ()


class BaseNumber(BaseExpression):
    __slots__ = ()


class BaseSet(_BaseSetOrDict):
    __slots__ = ()


class BaseSimpleComp(BaseComp):
    __slots__ = ()


class BaseSlice(CSTNode):
    __slots__ = ()


class BaseString(BaseExpression):
    __slots__ = ()


class BaseSuite(CSTNode):
    __slots__ = ()


class BaseTemplatedStringContent(CSTNode):
    __slots__ = ()


class BaseUnaryOp(CSTNode):
    __slots__ = ()


def _init_14(self, left, operator, right, lpar=(), rpar=()):
    self.left = left
    self.operator = operator
    self.right = right
    self.lpar = lpar
    self.rpar = rpar


class BinaryOperation(BaseExpression):
    __slots__ = _fields = ('left', 'operator', 'right', 'lpar', 'rpar')
    _child_fields = (('left', 2), ('right', 2))
    __init__ = _init_14


class BitAnd(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class BitAndAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


def _init_15(self, whitespace_after=_DEFAULT_1):
    self.whitespace_after = whitespace_after


class BitInvert(BaseUnaryOp):
    __slots__ = _fields = ('whitespace_after',)
    _child_fields = ()
    __init__ = _init_15


class BitOr(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class BitOrAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class BitXor(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class BitXorAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class BooleanOperation(BaseExpression):
    __slots__ = _fields = ('left', 'operator', 'right', 'lpar', 'rpar')
    _child_fields = (('left', 2), ('right', 2))
    __init__ = _init_14


def _init_16(self, semicolon=MaybeSentinel.DEFAULT):
    self.semicolon = semicolon


class Break(BaseSmallStatement):
    __slots__ = _fields = ('semicolon',)
    _child_fields = ()
    __init__ = _init_16


class _BaseExpressionWithArgs(BaseExpression):
    __slots__ = ()


def _init_17(self, func, args=(), lpar=(), rpar=(), whitespace_after_func=_DEFAULT_1, whitespace_before_args=_DEFAULT_1):
    self.func = func
    self.args = args
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_after_func = whitespace_after_func
    self.whitespace_before_args = whitespace_before_args


class Call(_BaseExpressionWithArgs):
    __slots__ = _fields = ('func', 'args', 'lpar', 'rpar', 'whitespace_after_func', 'whitespace_before_args')
    _child_fields = (('func', 2), ('args', 1))
    __init__ = _init_17


def _init_18(self, name, body, bases=(), keywords=(), decorators=(), lpar=MaybeSentinel.DEFAULT, rpar=MaybeSentinel.DEFAULT, leading_lines=(), lines_after_decorators=(), whitespace_after_class=_DEFAULT_0, whitespace_after_name=_DEFAULT_1, whitespace_before_colon=_DEFAULT_1, type_parameters=None, whitespace_after_type_parameters=_DEFAULT_1):
    self.name = name
    self.body = body
    self.bases = bases
    self.keywords = keywords
    self.decorators = decorators
    self.lpar = lpar
    self.rpar = rpar
    self.leading_lines = leading_lines
    self.lines_after_decorators = lines_after_decorators
    self.whitespace_after_class = whitespace_after_class
    self.whitespace_after_name = whitespace_after_name
    self.whitespace_before_colon = whitespace_before_colon
    self.type_parameters = type_parameters
    self.whitespace_after_type_parameters = whitespace_after_type_parameters


class ClassDef(BaseCompoundStatement):
    __slots__ = _fields = ('name', 'body', 'bases', 'keywords', 'decorators', 'lpar', 'rpar', 'leading_lines', 'lines_after_decorators', 'whitespace_after_class', 'whitespace_after_name', 'whitespace_before_colon', 'type_parameters', 'whitespace_after_type_parameters')
    _child_fields = (('name', 2), ('body', 2), ('bases', 1), ('keywords', 1), ('decorators', 1), ('type_parameters', 2))
    __init__ = _init_18


class Colon(_BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_10


class Comma(_BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_10


class Comment(BaseValueToken):
    __slots__ = _fields = ('value',)
    _child_fields = ()
    __init__ = _init_0


def _init_19(self, target, iter, ifs=(), inner_for_in=None, asynchronous=None, whitespace_before=_DEFAULT_0, whitespace_after_for=_DEFAULT_0, whitespace_before_in=_DEFAULT_0, whitespace_after_in=_DEFAULT_0):
    self.target = target
    self.iter = iter
    self.ifs = ifs
    self.inner_for_in = inner_for_in
    self.asynchronous = asynchronous
    self.whitespace_before = whitespace_before
    self.whitespace_after_for = whitespace_after_for
    self.whitespace_before_in = whitespace_before_in
    self.whitespace_after_in = whitespace_after_in


class CompFor(CSTNode):
    __slots__ = _fields = ('target', 'iter', 'ifs', 'inner_for_in', 'asynchronous', 'whitespace_before', 'whitespace_after_for', 'whitespace_before_in', 'whitespace_after_in')
    _child_fields = (('target', 2), ('iter', 2), ('ifs', 1), ('inner_for_in', 2))
    __init__ = _init_19


def _init_20(self, test, whitespace_before=_DEFAULT_0, whitespace_before_test=_DEFAULT_0):
    self.test = test
    self.whitespace_before = whitespace_before
    self.whitespace_before_test = whitespace_before_test


class CompIf(CSTNode):
    __slots__ = _fields = ('test', 'whitespace_before', 'whitespace_before_test')
    _child_fields = (('test', 2),)
    __init__ = _init_20


def _init_21(self, left, comparisons, lpar=(), rpar=()):
    self.left = left
    self.comparisons = comparisons
    self.lpar = lpar
    self.rpar = rpar


class Comparison(BaseExpression):
    __slots__ = _fields = ('left', 'comparisons', 'lpar', 'rpar')
    _child_fields = (('left', 2), ('comparisons', 1))
    __init__ = _init_21


def _init_22(self, operator, comparator):
    self.operator = operator
    self.comparator = comparator


class ComparisonTarget(CSTNode):
    __slots__ = _fields = ('operator', 'comparator')
    _child_fields = (('comparator', 2),)
    __init__ = _init_22


def _init_23(self, left, right, lpar=(), rpar=(), whitespace_between=_DEFAULT_1):
    self.left = left
    self.right = right
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_between = whitespace_between


class ConcatenatedString(BaseString, ConcatenatedValue):
    __slots__ = _fields = ('left', 'right', 'lpar', 'rpar', 'whitespace_between')
    _child_fields = (('left', 2), ('right', 2))
    __init__ = _init_23


class Continue(BaseSmallStatement):
    __slots__ = _fields = ('semicolon',)
    _child_fields = ()
    __init__ = _init_16


def _init_24(self, value=None):
    self.value = value


class Newline(BaseLeaf):
    __slots__ = _fields = ('value',)
    _child_fields = ()
    __init__ = _init_24


_DEFAULT_3 = Newline()


def _init_25(self, whitespace=_DEFAULT_1, comment=None, newline=_DEFAULT_3):
    self.whitespace = whitespace
    self.comment = comment
    self.newline = newline


class TrailingWhitespace(CSTNode):
    __slots__ = _fields = ('whitespace', 'comment', 'newline')
    _child_fields = (('comment', 2),)
    __init__ = _init_25


_DEFAULT_4 = TrailingWhitespace()


def _init_26(self, decorator, leading_lines=(), whitespace_after_at=_DEFAULT_1, trailing_whitespace=_DEFAULT_4):
    self.decorator = decorator
    self.leading_lines = leading_lines
    self.whitespace_after_at = whitespace_after_at
    self.trailing_whitespace = trailing_whitespace


class Decorator(CSTNode):
    __slots__ = _fields = ('decorator', 'leading_lines', 'whitespace_after_at', 'trailing_whitespace')
    _child_fields = (('decorator', 2),)
    __init__ = _init_26


def _init_27(self, target, whitespace_after_del=_DEFAULT_0, semicolon=MaybeSentinel.DEFAULT):
    self.target = target
    self.whitespace_after_del = whitespace_after_del
    self.semicolon = semicolon


class Del(BaseSmallStatement):
    __slots__ = _fields = ('target', 'whitespace_after_del', 'semicolon')
    _child_fields = (('target', 2),)
    __init__ = _init_27


class LeftCurlyBrace(CSTNode):
    __slots__ = _fields = ('whitespace_after',)
    _child_fields = ()
    __init__ = _init_15


_DEFAULT_5 = LeftCurlyBrace()


def _init_28(self, whitespace_before=_DEFAULT_1):
    self.whitespace_before = whitespace_before


class RightCurlyBrace(CSTNode):
    __slots__ = _fields = ('whitespace_before',)
    _child_fields = ()
    __init__ = _init_28


_DEFAULT_6 = RightCurlyBrace()


def _init_29(self, elements, lbrace=_DEFAULT_5, rbrace=_DEFAULT_6, lpar=(), rpar=()):
    self.elements = elements
    self.lbrace = lbrace
    self.rbrace = rbrace
    self.lpar = lpar
    self.rpar = rpar


class Dict(BaseDict):
    __slots__ = _fields = ('elements', 'lbrace', 'rbrace', 'lpar', 'rpar')
    _child_fields = (('elements', 1),)
    __init__ = _init_29


def _init_30(self, key, value, for_in, lbrace=_DEFAULT_5, rbrace=_DEFAULT_6, lpar=(), rpar=(), whitespace_before_colon=_DEFAULT_1, whitespace_after_colon=_DEFAULT_0):
    self.key = key
    self.value = value
    self.for_in = for_in
    self.lbrace = lbrace
    self.rbrace = rbrace
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_before_colon = whitespace_before_colon
    self.whitespace_after_colon = whitespace_after_colon


class DictComp(BaseDict, BaseComp):
    __slots__ = _fields = ('key', 'value', 'for_in', 'lbrace', 'rbrace', 'lpar', 'rpar', 'whitespace_before_colon', 'whitespace_after_colon')
    _child_fields = (('key', 2), ('value', 2), ('for_in', 2))
    __init__ = _init_30


def _init_31(self, key, value, comma=MaybeSentinel.DEFAULT, whitespace_before_colon=_DEFAULT_1, whitespace_after_colon=_DEFAULT_0):
    self.key = key
    self.value = value
    self.comma = comma
    self.whitespace_before_colon = whitespace_before_colon
    self.whitespace_after_colon = whitespace_after_colon


class DictElement(BaseDictElement):
    __slots__ = _fields = ('key', 'value', 'comma', 'whitespace_before_colon', 'whitespace_after_colon')
    _child_fields = (('key', 2), ('value', 2))
    __init__ = _init_31


class Divide(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class DivideAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


def _init_32(self, value, comma=MaybeSentinel.DEFAULT):
    self.value = value
    self.comma = comma


class Element(BaseElement):
    __slots__ = _fields = ('value', 'comma')
    _child_fields = (('value', 2),)
    __init__ = _init_32


def _init_33(self, lpar=(), rpar=()):
    self.lpar = lpar
    self.rpar = rpar


class Ellipsis(BaseExpression):
    __slots__ = _fields = ('lpar', 'rpar')
    _child_fields = ()
    __init__ = _init_33


def _init_34(self, body, leading_lines=(), whitespace_before_colon=_DEFAULT_1):
    self.body = body
    self.leading_lines = leading_lines
    self.whitespace_before_colon = whitespace_before_colon


class Else(CSTNode):
    __slots__ = _fields = ('body', 'leading_lines', 'whitespace_before_colon')
    _child_fields = (('body', 2),)
    __init__ = _init_34


def _init_35(self, indent=True, whitespace=_DEFAULT_1, comment=None, newline=_DEFAULT_3):
    self.indent = indent
    self.whitespace = whitespace
    self.comment = comment
    self.newline = newline


class EmptyLine(CSTNode):
    __slots__ = _fields = ('indent', 'whitespace', 'comment', 'newline')
    _child_fields = (('comment', 2),)
    __init__ = _init_35


class Equal(BaseCompOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


def _init_36(self, body, type=None, name=None, leading_lines=(), whitespace_after_except=_DEFAULT_0, whitespace_before_colon=_DEFAULT_1):
    self.body = body
    self.type = type
    self.name = name
    self.leading_lines = leading_lines
    self.whitespace_after_except = whitespace_after_except
    self.whitespace_before_colon = whitespace_before_colon


class ExceptHandler(CSTNode):
    __slots__ = _fields = ('body', 'type', 'name', 'leading_lines', 'whitespace_after_except', 'whitespace_before_colon')
    _child_fields = (('body', 2), ('type', 2), ('name', 2))
    __init__ = _init_36


def _init_37(self, body, type, name=None, leading_lines=(), whitespace_after_except=_DEFAULT_1, whitespace_after_star=_DEFAULT_0, whitespace_before_colon=_DEFAULT_1):
    self.body = body
    self.type = type
    self.name = name
    self.leading_lines = leading_lines
    self.whitespace_after_except = whitespace_after_except
    self.whitespace_after_star = whitespace_after_star
    self.whitespace_before_colon = whitespace_before_colon


class ExceptStarHandler(CSTNode):
    __slots__ = _fields = ('body', 'type', 'name', 'leading_lines', 'whitespace_after_except', 'whitespace_after_star', 'whitespace_before_colon')
    _child_fields = (('body', 2), ('type', 2), ('name', 2))
    __init__ = _init_37


def _init_38(self, value, semicolon=MaybeSentinel.DEFAULT):
    self.value = value
    self.semicolon = semicolon


class Expr(BaseSmallStatement):
    __slots__ = _fields = ('value', 'semicolon')
    _child_fields = (('value', 2),)
    __init__ = _init_38


class Finally(CSTNode):
    __slots__ = _fields = ('body', 'leading_lines', 'whitespace_before_colon')
    _child_fields = (('body', 2),)
    __init__ = _init_34


def _init_39(self, value, lpar=(), rpar=()):
    self.value = value
    self.lpar = lpar
    self.rpar = rpar


class Float(BaseNumber, LiteralValue):
    __slots__ = _fields = ('value', 'lpar', 'rpar')
    _child_fields = ()
    __init__ = _init_39


class FloorDivide(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class FloorDivideAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


def _init_40(self, target, iter, body, orelse=None, asynchronous=None, leading_lines=(), whitespace_after_for=_DEFAULT_0, whitespace_before_in=_DEFAULT_0, whitespace_after_in=_DEFAULT_0, whitespace_before_colon=_DEFAULT_1):
    self.target = target
    self.iter = iter
    self.body = body
    self.orelse = orelse
    self.asynchronous = asynchronous
    self.leading_lines = leading_lines
    self.whitespace_after_for = whitespace_after_for
    self.whitespace_before_in = whitespace_before_in
    self.whitespace_after_in = whitespace_after_in
    self.whitespace_before_colon = whitespace_before_colon


class For(BaseCompoundStatement):
    __slots__ = _fields = ('target', 'iter', 'body', 'orelse', 'asynchronous', 'leading_lines', 'whitespace_after_for', 'whitespace_before_in', 'whitespace_after_in', 'whitespace_before_colon')
    _child_fields = (('target', 2), ('iter', 2), ('body', 2), ('orelse', 2))
    __init__ = _init_40


class _BasePrefixedString(BaseString):
    __slots__ = ()


def _init_41(self, parts, start='f"', end='"', lpar=(), rpar=()):
    self.parts = parts
    self.start = start
    self.end = end
    self.lpar = lpar
    self.rpar = rpar


class FormattedString(_BasePrefixedString):
    __slots__ = _fields = ('parts', 'start', 'end', 'lpar', 'rpar')
    _child_fields = (('parts', 1),)
    __init__ = _init_41


def _init_42(self, expression, conversion=None, format_spec=None, whitespace_before_expression=_DEFAULT_1, whitespace_after_expression=_DEFAULT_1, equal=None):
    self.expression = expression
    self.conversion = conversion
    self.format_spec = format_spec
    self.whitespace_before_expression = whitespace_before_expression
    self.whitespace_after_expression = whitespace_after_expression
    self.equal = equal


class FormattedStringExpression(BaseFormattedStringContent):
    __slots__ = _fields = ('expression', 'conversion', 'format_spec', 'whitespace_before_expression', 'whitespace_after_expression', 'equal')
    _child_fields = (('expression', 2), ('format_spec', 0))
    __init__ = _init_42


class FormattedStringText(BaseFormattedStringContent):
    __slots__ = _fields = ('value',)
    _child_fields = ()
    __init__ = _init_0


def _init_43(self, item, whitespace_before_from=MaybeSentinel.DEFAULT, whitespace_after_from=_DEFAULT_0):
    self.item = item
    self.whitespace_before_from = whitespace_before_from
    self.whitespace_after_from = whitespace_after_from


class From(CSTNode):
    __slots__ = _fields = ('item', 'whitespace_before_from', 'whitespace_after_from')
    _child_fields = (('item', 2),)
    __init__ = _init_43


def _init_44(self, name, params, body, decorators=(), returns=None, asynchronous=None, leading_lines=(), lines_after_decorators=(), whitespace_after_def=_DEFAULT_0, whitespace_after_name=_DEFAULT_1, whitespace_before_params=_DEFAULT_1, whitespace_before_colon=_DEFAULT_1, type_parameters=None, whitespace_after_type_parameters=_DEFAULT_1):
    self.name = name
    self.params = params
    self.body = body
    self.decorators = decorators
    self.returns = returns
    self.asynchronous = asynchronous
    self.leading_lines = leading_lines
    self.lines_after_decorators = lines_after_decorators
    self.whitespace_after_def = whitespace_after_def
    self.whitespace_after_name = whitespace_after_name
    self.whitespace_before_params = whitespace_before_params
    self.whitespace_before_colon = whitespace_before_colon
    self.type_parameters = type_parameters
    self.whitespace_after_type_parameters = whitespace_after_type_parameters


class FunctionDef(BaseCompoundStatement):
    __slots__ = _fields = ('name', 'params', 'body', 'decorators', 'returns', 'asynchronous', 'leading_lines', 'lines_after_decorators', 'whitespace_after_def', 'whitespace_after_name', 'whitespace_before_params', 'whitespace_before_colon', 'type_parameters', 'whitespace_after_type_parameters')
    _child_fields = (('name', 2), ('params', 2), ('body', 2), ('decorators', 1), ('returns', 2), ('type_parameters', 2))
    __init__ = _init_44


class LeftParen(CSTNode):
    __slots__ = _fields = ('whitespace_after',)
    _child_fields = ()
    __init__ = _init_15


_DEFAULT_7 = LeftParen()


class RightParen(CSTNode):
    __slots__ = _fields = ('whitespace_before',)
    _child_fields = ()
    __init__ = _init_28


_DEFAULT_8 = RightParen()


def _init_45(self, elt, for_in, lpar=(_DEFAULT_7, ), rpar=(_DEFAULT_8, )):
    self.elt = elt
    self.for_in = for_in
    self.lpar = lpar
    self.rpar = rpar


class GeneratorExp(BaseSimpleComp):
    __slots__ = _fields = ('elt', 'for_in', 'lpar', 'rpar')
    _child_fields = (('elt', 2), ('for_in', 2))
    __init__ = _init_45


def _init_46(self, names, whitespace_after_global=_DEFAULT_0, semicolon=MaybeSentinel.DEFAULT):
    self.names = names
    self.whitespace_after_global = whitespace_after_global
    self.semicolon = semicolon


class Global(BaseSmallStatement):
    __slots__ = _fields = ('names', 'whitespace_after_global', 'semicolon')
    _child_fields = (('names', 1),)
    __init__ = _init_46


class GreaterThan(BaseCompOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class GreaterThanEqual(BaseCompOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


def _init_47(self, test, body, orelse=None, leading_lines=(), whitespace_before_test=_DEFAULT_0, whitespace_after_test=_DEFAULT_1):
    self.test = test
    self.body = body
    self.orelse = orelse
    self.leading_lines = leading_lines
    self.whitespace_before_test = whitespace_before_test
    self.whitespace_after_test = whitespace_after_test


class If(BaseCompoundStatement):
    __slots__ = _fields = ('test', 'body', 'orelse', 'leading_lines', 'whitespace_before_test', 'whitespace_after_test')
    _child_fields = (('test', 2), ('body', 2), ('orelse', 2))
    __init__ = _init_47


def _init_48(self, test, body, orelse, lpar=(), rpar=(), whitespace_before_if=_DEFAULT_0, whitespace_after_if=_DEFAULT_0, whitespace_before_else=_DEFAULT_0, whitespace_after_else=_DEFAULT_0):
    self.test = test
    self.body = body
    self.orelse = orelse
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_before_if = whitespace_before_if
    self.whitespace_after_if = whitespace_after_if
    self.whitespace_before_else = whitespace_before_else
    self.whitespace_after_else = whitespace_after_else


class IfExp(BaseExpression):
    __slots__ = _fields = ('test', 'body', 'orelse', 'lpar', 'rpar', 'whitespace_before_if', 'whitespace_after_if', 'whitespace_before_else', 'whitespace_after_else')
    _child_fields = (('test', 2), ('body', 2), ('orelse', 2))
    __init__ = _init_48


class Imaginary(BaseNumber, LiteralValue):
    __slots__ = _fields = ('value', 'lpar', 'rpar')
    _child_fields = ()
    __init__ = _init_39


def _init_49(self, names, semicolon=MaybeSentinel.DEFAULT, whitespace_after_import=_DEFAULT_0):
    self.names = names
    self.semicolon = semicolon
    self.whitespace_after_import = whitespace_after_import


class Import(BaseSmallStatement):
    __slots__ = _fields = ('names', 'semicolon', 'whitespace_after_import')
    _child_fields = (('names', 1),)
    __init__ = _init_49


def _init_50(self, name, asname=None, comma=MaybeSentinel.DEFAULT):
    self.name = name
    self.asname = asname
    self.comma = comma


class ImportAlias(CSTNode):
    __slots__ = _fields = ('name', 'asname', 'comma')
    _child_fields = (('name', 2), ('asname', 2))
    __init__ = _init_50


def _init_51(self, module, names, relative=(), lpar=None, rpar=None, semicolon=MaybeSentinel.DEFAULT, whitespace_after_from=_DEFAULT_0, whitespace_before_import=_DEFAULT_0, whitespace_after_import=_DEFAULT_0):
    self.module = module
    self.names = names
    self.relative = relative
    self.lpar = lpar
    self.rpar = rpar
    self.semicolon = semicolon
    self.whitespace_after_from = whitespace_after_from
    self.whitespace_before_import = whitespace_before_import
    self.whitespace_after_import = whitespace_after_import


class ImportFrom(BaseSmallStatement):
    __slots__ = _fields = ('module', 'names', 'relative', 'lpar', 'rpar', 'semicolon', 'whitespace_after_from', 'whitespace_before_import', 'whitespace_after_import')
    _child_fields = (('module', 2), ('names', 0), ('relative', 1))
    __init__ = _init_51


class ImportStar(BaseLeaf):
    __slots__ = _fields = ()
    _child_fields = ()


class In(BaseCompOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


def _init_52(self, body, header=_DEFAULT_4, indent=None, footer=()):
    self.body = body
    self.header = header
    self.indent = indent
    self.footer = footer


class IndentedBlock(BaseSuite):
    __slots__ = _fields = ('body', 'header', 'indent', 'footer')
    _child_fields = (('body', 1),)
    __init__ = _init_52


def _init_53(self, value, star=None, whitespace_after_star=None):
    self.value = value
    self.star = star
    self.whitespace_after_star = whitespace_after_star


class Index(BaseSlice):
    __slots__ = _fields = ('value', 'star', 'whitespace_after_star')
    _child_fields = (('value', 2),)
    __init__ = _init_53


class Integer(BaseNumber, LiteralValue):
    __slots__ = _fields = ('value', 'lpar', 'rpar')
    _child_fields = ()
    __init__ = _init_39


class Is(BaseCompOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class _BaseTwoTokenOp(CSTNode):
    __slots__ = ()


def _init_54(self, whitespace_before=_DEFAULT_0, whitespace_between=_DEFAULT_0, whitespace_after=_DEFAULT_0):
    self.whitespace_before = whitespace_before
    self.whitespace_between = whitespace_between
    self.whitespace_after = whitespace_after


class IsNot(BaseCompOp, _BaseTwoTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_between', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_54


_DEFAULT_9 = Colon(whitespace_after=_DEFAULT_0)


def _init_55(self, params, body, colon=_DEFAULT_9, lpar=(), rpar=(), whitespace_after_lambda=MaybeSentinel.DEFAULT):
    self.params = params
    self.body = body
    self.colon = colon
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_after_lambda = whitespace_after_lambda


class Lambda(BaseExpression):
    __slots__ = _fields = ('params', 'body', 'colon', 'lpar', 'rpar', 'whitespace_after_lambda')
    _child_fields = (('params', 2), ('body', 2))
    __init__ = _init_55


def _init_56(self, names, semicolon=MaybeSentinel.DEFAULT, whitespace_after_lazy=_DEFAULT_0, whitespace_after_import=_DEFAULT_0):
    self.names = names
    self.semicolon = semicolon
    self.whitespace_after_lazy = whitespace_after_lazy
    self.whitespace_after_import = whitespace_after_import


class LazyImport(BaseSmallStatement):
    __slots__ = _fields = ('names', 'semicolon', 'whitespace_after_lazy', 'whitespace_after_import')
    _child_fields = (('names', 1),)
    __init__ = _init_56


def _init_57(self, module, names, relative=(), lpar=None, rpar=None, semicolon=MaybeSentinel.DEFAULT, whitespace_after_lazy=_DEFAULT_0, whitespace_after_from=_DEFAULT_0, whitespace_before_import=_DEFAULT_0, whitespace_after_import=_DEFAULT_0):
    self.module = module
    self.names = names
    self.relative = relative
    self.lpar = lpar
    self.rpar = rpar
    self.semicolon = semicolon
    self.whitespace_after_lazy = whitespace_after_lazy
    self.whitespace_after_from = whitespace_after_from
    self.whitespace_before_import = whitespace_before_import
    self.whitespace_after_import = whitespace_after_import


class LazyImportFrom(BaseSmallStatement):
    __slots__ = _fields = ('module', 'names', 'relative', 'lpar', 'rpar', 'semicolon', 'whitespace_after_lazy', 'whitespace_after_from', 'whitespace_before_import', 'whitespace_after_import')
    _child_fields = (('module', 2), ('names', 0), ('relative', 1))
    __init__ = _init_57


class LeftShift(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class LeftShiftAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class LeftSquareBracket(CSTNode):
    __slots__ = _fields = ('whitespace_after',)
    _child_fields = ()
    __init__ = _init_15


class LessThan(BaseCompOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class LessThanEqual(BaseCompOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


_DEFAULT_10 = LeftSquareBracket()


class RightSquareBracket(CSTNode):
    __slots__ = _fields = ('whitespace_before',)
    _child_fields = ()
    __init__ = _init_28


_DEFAULT_11 = RightSquareBracket()


def _init_58(self, elements, lbracket=_DEFAULT_10, rbracket=_DEFAULT_11, lpar=(), rpar=()):
    self.elements = elements
    self.lbracket = lbracket
    self.rbracket = rbracket
    self.lpar = lpar
    self.rpar = rpar


class List(BaseList, BaseAssignTargetExpression, BaseDelTargetExpression):
    __slots__ = _fields = ('elements', 'lbracket', 'rbracket', 'lpar', 'rpar')
    _child_fields = (('elements', 1),)
    __init__ = _init_58


def _init_59(self, elt, for_in, lbracket=_DEFAULT_10, rbracket=_DEFAULT_11, lpar=(), rpar=()):
    self.elt = elt
    self.for_in = for_in
    self.lbracket = lbracket
    self.rbracket = rbracket
    self.lpar = lpar
    self.rpar = rpar


class ListComp(BaseList, BaseSimpleComp):
    __slots__ = _fields = ('elt', 'for_in', 'lbracket', 'rbracket', 'lpar', 'rpar')
    _child_fields = (('elt', 2), ('for_in', 2))
    __init__ = _init_59


def _init_60(self, subject, cases, leading_lines=(), whitespace_after_match=_DEFAULT_0, whitespace_before_colon=_DEFAULT_1, whitespace_after_colon=_DEFAULT_4, indent=None, footer=()):
    self.subject = subject
    self.cases = cases
    self.leading_lines = leading_lines
    self.whitespace_after_match = whitespace_after_match
    self.whitespace_before_colon = whitespace_before_colon
    self.whitespace_after_colon = whitespace_after_colon
    self.indent = indent
    self.footer = footer


class Match(BaseCompoundStatement):
    __slots__ = _fields = ('subject', 'cases', 'leading_lines', 'whitespace_after_match', 'whitespace_before_colon', 'whitespace_after_colon', 'indent', 'footer')
    _child_fields = (('subject', 2), ('cases', 1))
    __init__ = _init_60


class MatchPattern(_BaseParenthesizedNode):
    __slots__ = ()


def _init_61(self, pattern=None, name=None, whitespace_before_as=MaybeSentinel.DEFAULT, whitespace_after_as=MaybeSentinel.DEFAULT, lpar=(), rpar=()):
    self.pattern = pattern
    self.name = name
    self.whitespace_before_as = whitespace_before_as
    self.whitespace_after_as = whitespace_after_as
    self.lpar = lpar
    self.rpar = rpar


class MatchAs(MatchPattern):
    __slots__ = _fields = ('pattern', 'name', 'whitespace_before_as', 'whitespace_after_as', 'lpar', 'rpar')
    _child_fields = (('pattern', 2), ('name', 2))
    __init__ = _init_61


def _init_62(self, pattern, body, guard=None, leading_lines=(), whitespace_after_case=_DEFAULT_0, whitespace_before_if=_DEFAULT_1, whitespace_after_if=_DEFAULT_1, whitespace_before_colon=_DEFAULT_1):
    self.pattern = pattern
    self.body = body
    self.guard = guard
    self.leading_lines = leading_lines
    self.whitespace_after_case = whitespace_after_case
    self.whitespace_before_if = whitespace_before_if
    self.whitespace_after_if = whitespace_after_if
    self.whitespace_before_colon = whitespace_before_colon


class MatchCase(CSTNode):
    __slots__ = _fields = ('pattern', 'body', 'guard', 'leading_lines', 'whitespace_after_case', 'whitespace_before_if', 'whitespace_after_if', 'whitespace_before_colon')
    _child_fields = (('pattern', 2), ('body', 2), ('guard', 2))
    __init__ = _init_62


def _init_63(self, cls, patterns=(), kwds=(), whitespace_after_cls=_DEFAULT_1, whitespace_before_patterns=_DEFAULT_1, whitespace_after_kwds=_DEFAULT_1, lpar=(), rpar=()):
    self.cls = cls
    self.patterns = patterns
    self.kwds = kwds
    self.whitespace_after_cls = whitespace_after_cls
    self.whitespace_before_patterns = whitespace_before_patterns
    self.whitespace_after_kwds = whitespace_after_kwds
    self.lpar = lpar
    self.rpar = rpar


class MatchClass(MatchPattern):
    __slots__ = _fields = ('cls', 'patterns', 'kwds', 'whitespace_after_cls', 'whitespace_before_patterns', 'whitespace_after_kwds', 'lpar', 'rpar')
    _child_fields = (('cls', 2), ('patterns', 1), ('kwds', 1))
    __init__ = _init_63


def _init_64(self, key, pattern, comma=MaybeSentinel.DEFAULT, whitespace_before_equal=_DEFAULT_1, whitespace_after_equal=_DEFAULT_1):
    self.key = key
    self.pattern = pattern
    self.comma = comma
    self.whitespace_before_equal = whitespace_before_equal
    self.whitespace_after_equal = whitespace_after_equal


class MatchKeywordElement(CSTNode):
    __slots__ = _fields = ('key', 'pattern', 'comma', 'whitespace_before_equal', 'whitespace_after_equal')
    _child_fields = (('key', 2), ('pattern', 2))
    __init__ = _init_64


class MatchSequence(MatchPattern):
    __slots__ = ()


def _init_65(self, patterns, lbracket=None, rbracket=None, lpar=(), rpar=()):
    self.patterns = patterns
    self.lbracket = lbracket
    self.rbracket = rbracket
    self.lpar = lpar
    self.rpar = rpar


class MatchList(MatchSequence):
    __slots__ = _fields = ('patterns', 'lbracket', 'rbracket', 'lpar', 'rpar')
    _child_fields = (('patterns', 1),)
    __init__ = _init_65


def _init_66(self, elements=(), lbrace=_DEFAULT_5, rbrace=_DEFAULT_6, rest=None, whitespace_before_rest=_DEFAULT_1, trailing_comma=None, lpar=(), rpar=()):
    self.elements = elements
    self.lbrace = lbrace
    self.rbrace = rbrace
    self.rest = rest
    self.whitespace_before_rest = whitespace_before_rest
    self.trailing_comma = trailing_comma
    self.lpar = lpar
    self.rpar = rpar


class MatchMapping(MatchPattern):
    __slots__ = _fields = ('elements', 'lbrace', 'rbrace', 'rest', 'whitespace_before_rest', 'trailing_comma', 'lpar', 'rpar')
    _child_fields = (('elements', 1), ('rest', 2), ('trailing_comma', 2))
    __init__ = _init_66


def _init_67(self, key, pattern, comma=MaybeSentinel.DEFAULT, whitespace_before_colon=_DEFAULT_1, whitespace_after_colon=_DEFAULT_0):
    self.key = key
    self.pattern = pattern
    self.comma = comma
    self.whitespace_before_colon = whitespace_before_colon
    self.whitespace_after_colon = whitespace_after_colon


class MatchMappingElement(CSTNode):
    __slots__ = _fields = ('key', 'pattern', 'comma', 'whitespace_before_colon', 'whitespace_after_colon')
    _child_fields = (('key', 2), ('pattern', 2))
    __init__ = _init_67


def _init_68(self, patterns, lpar=(), rpar=()):
    self.patterns = patterns
    self.lpar = lpar
    self.rpar = rpar


class MatchOr(MatchPattern):
    __slots__ = _fields = ('patterns', 'lpar', 'rpar')
    _child_fields = (('patterns', 1),)
    __init__ = _init_68


def _init_69(self, pattern, separator=MaybeSentinel.DEFAULT):
    self.pattern = pattern
    self.separator = separator


class MatchOrElement(CSTNode):
    __slots__ = _fields = ('pattern', 'separator')
    _child_fields = (('pattern', 2), ('separator', 0))
    __init__ = _init_69


class MatchSequenceElement(CSTNode):
    __slots__ = _fields = ('value', 'comma')
    _child_fields = (('value', 2),)
    __init__ = _init_32


class MatchSingleton(MatchPattern):
    __slots__ = _fields = ('value',)
    _child_fields = (('value', 2),)
    __init__ = _init_0


def _init_70(self, name=None, comma=MaybeSentinel.DEFAULT, whitespace_before_name=_DEFAULT_1):
    self.name = name
    self.comma = comma
    self.whitespace_before_name = whitespace_before_name


class MatchStar(CSTNode):
    __slots__ = _fields = ('name', 'comma', 'whitespace_before_name')
    _child_fields = (('name', 2),)
    __init__ = _init_70


def _init_71(self, patterns, lpar=(_DEFAULT_7, ), rpar=(_DEFAULT_8, )):
    self.patterns = patterns
    self.lpar = lpar
    self.rpar = rpar


class MatchTuple(MatchSequence):
    __slots__ = _fields = ('patterns', 'lpar', 'rpar')
    _child_fields = (('patterns', 1),)
    __init__ = _init_71


class MatchValue(MatchPattern):
    __slots__ = _fields = ('value',)
    _child_fields = (('value', 2),)
    __init__ = _init_0


class MatrixMultiply(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class MatrixMultiplyAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class Minus(BaseUnaryOp):
    __slots__ = _fields = ('whitespace_after',)
    _child_fields = ()
    __init__ = _init_15


def _init_72(self, body, header=(), footer=(), encoding='utf-8', default_indent='    ', default_newline='\n', has_trailing_newline=True):
    self.body = body
    self.header = header
    self.footer = footer
    self.encoding = encoding
    self.default_indent = default_indent
    self.default_newline = default_newline
    self.has_trailing_newline = has_trailing_newline


class Module(CSTNode, ModuleMethods):
    __slots__ = _fields = ('body', 'header', 'footer', 'encoding', 'default_indent', 'default_newline', 'has_trailing_newline')
    _child_fields = (('body', 1),)
    __init__ = _init_72


class Modulo(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class ModuloAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class Multiply(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class MultiplyAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class Name(BaseAssignTargetExpression, BaseDelTargetExpression):
    __slots__ = _fields = ('value', 'lpar', 'rpar')
    _child_fields = ()
    __init__ = _init_39


def _init_73(self, name, comma=MaybeSentinel.DEFAULT):
    self.name = name
    self.comma = comma


class NameItem(CSTNode):
    __slots__ = _fields = ('name', 'comma')
    _child_fields = (('name', 2),)
    __init__ = _init_73


def _init_74(self, target, value, lpar=(), rpar=(), whitespace_before_walrus=_DEFAULT_0, whitespace_after_walrus=_DEFAULT_0):
    self.target = target
    self.value = value
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_before_walrus = whitespace_before_walrus
    self.whitespace_after_walrus = whitespace_after_walrus


class NamedExpr(BaseExpression):
    __slots__ = _fields = ('target', 'value', 'lpar', 'rpar', 'whitespace_before_walrus', 'whitespace_after_walrus')
    _child_fields = (('target', 2), ('value', 2))
    __init__ = _init_74


def _init_75(self, names, whitespace_after_nonlocal=_DEFAULT_0, semicolon=MaybeSentinel.DEFAULT):
    self.names = names
    self.whitespace_after_nonlocal = whitespace_after_nonlocal
    self.semicolon = semicolon


class Nonlocal(BaseSmallStatement):
    __slots__ = _fields = ('names', 'whitespace_after_nonlocal', 'semicolon')
    _child_fields = (('names', 1),)
    __init__ = _init_75


class Not(BaseUnaryOp):
    __slots__ = _fields = ('whitespace_after',)
    _child_fields = ()
    __init__ = _init_9


def _init_76(self, value='!=', whitespace_before=_DEFAULT_0, whitespace_after=_DEFAULT_0):
    self.value = value
    self.whitespace_before = whitespace_before
    self.whitespace_after = whitespace_after


class NotEqual(BaseCompOp, _BaseOneTokenOp):
    __slots__ = _fields = ('value', 'whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_76


class NotIn(BaseCompOp, _BaseTwoTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_between', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_54


class Or(BaseBooleanOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


def _init_77(self, name, annotation=None, equal=MaybeSentinel.DEFAULT, default=None, comma=MaybeSentinel.DEFAULT, star=MaybeSentinel.DEFAULT, whitespace_after_star=_DEFAULT_1, whitespace_after_param=_DEFAULT_1):
    self.name = name
    self.annotation = annotation
    self.equal = equal
    self.default = default
    self.comma = comma
    self.star = star
    self.whitespace_after_star = whitespace_after_star
    self.whitespace_after_param = whitespace_after_param


class Param(CSTNode):
    __slots__ = _fields = ('name', 'annotation', 'equal', 'default', 'comma', 'star', 'whitespace_after_star', 'whitespace_after_param')
    _child_fields = (('name', 2), ('annotation', 2), ('default', 2))
    __init__ = _init_77


def _init_78(self, comma=MaybeSentinel.DEFAULT, whitespace_after=_DEFAULT_1):
    self.comma = comma
    self.whitespace_after = whitespace_after


class ParamSlash(CSTNode):
    __slots__ = _fields = ('comma', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_78


def _init_79(self, name, whitespace_after_star=_DEFAULT_1):
    self.name = name
    self.whitespace_after_star = whitespace_after_star


class ParamSpec(CSTNode):
    __slots__ = _fields = ('name', 'whitespace_after_star')
    _child_fields = (('name', 2),)
    __init__ = _init_79


_DEFAULT_12 = Comma(whitespace_after=_DEFAULT_0)


def _init_80(self, comma=_DEFAULT_12):
    self.comma = comma


class ParamStar(CSTNode):
    __slots__ = _fields = ('comma',)
    _child_fields = ()
    __init__ = _init_80


def _init_81(self, params=(), star_arg=MaybeSentinel.DEFAULT, kwonly_params=(), star_kwarg=None, posonly_params=(), posonly_ind=MaybeSentinel.DEFAULT):
    self.params = params
    self.star_arg = star_arg
    self.kwonly_params = kwonly_params
    self.star_kwarg = star_kwarg
    self.posonly_params = posonly_params
    self.posonly_ind = posonly_ind


class Parameters(CSTNode):
    __slots__ = _fields = ('params', 'star_arg', 'kwonly_params', 'star_kwarg', 'posonly_params', 'posonly_ind')
    _child_fields = (('params', 1), ('star_arg', 0), ('kwonly_params', 1), ('star_kwarg', 2), ('posonly_params', 1), ('posonly_ind', 0))
    __init__ = _init_81


def _init_82(self, first_line=_DEFAULT_4, empty_lines=(), indent=False, last_line=_DEFAULT_1):
    self.first_line = first_line
    self.empty_lines = empty_lines
    self.indent = indent
    self.last_line = last_line


class ParenthesizedWhitespace(BaseParenthesizableWhitespace):
    __slots__ = _fields = ('first_line', 'empty_lines', 'indent', 'last_line')
    _child_fields = (('first_line', 2), ('empty_lines', 1), ('last_line', 2))
    __init__ = _init_82


class Pass(BaseSmallStatement):
    __slots__ = _fields = ('semicolon',)
    _child_fields = ()
    __init__ = _init_16


class Plus(BaseUnaryOp):
    __slots__ = _fields = ('whitespace_after',)
    _child_fields = ()
    __init__ = _init_15


class Power(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class PowerAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


def _init_83(self, exc=None, cause=None, whitespace_after_raise=MaybeSentinel.DEFAULT, semicolon=MaybeSentinel.DEFAULT):
    self.exc = exc
    self.cause = cause
    self.whitespace_after_raise = whitespace_after_raise
    self.semicolon = semicolon


class Raise(BaseSmallStatement):
    __slots__ = _fields = ('exc', 'cause', 'whitespace_after_raise', 'semicolon')
    _child_fields = (('exc', 2), ('cause', 2))
    __init__ = _init_83


def _init_84(self, value=None, whitespace_after_return=MaybeSentinel.DEFAULT, semicolon=MaybeSentinel.DEFAULT):
    self.value = value
    self.whitespace_after_return = whitespace_after_return
    self.semicolon = semicolon


class Return(BaseSmallStatement):
    __slots__ = _fields = ('value', 'whitespace_after_return', 'semicolon')
    _child_fields = (('value', 2),)
    __init__ = _init_84


class RightShift(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class RightShiftAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class Semicolon(_BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_10


class Set(BaseSet):
    __slots__ = _fields = ('elements', 'lbrace', 'rbrace', 'lpar', 'rpar')
    _child_fields = (('elements', 1),)
    __init__ = _init_29


def _init_85(self, elt, for_in, lbrace=_DEFAULT_5, rbrace=_DEFAULT_6, lpar=(), rpar=()):
    self.elt = elt
    self.for_in = for_in
    self.lbrace = lbrace
    self.rbrace = rbrace
    self.lpar = lpar
    self.rpar = rpar


class SetComp(BaseSet, BaseSimpleComp):
    __slots__ = _fields = ('elt', 'for_in', 'lbrace', 'rbrace', 'lpar', 'rpar')
    _child_fields = (('elt', 2), ('for_in', 2))
    __init__ = _init_85


class _BaseSimpleStatement(CSTNode):
    __slots__ = ()


def _init_86(self, body, leading_lines=(), trailing_whitespace=_DEFAULT_4):
    self.body = body
    self.leading_lines = leading_lines
    self.trailing_whitespace = trailing_whitespace


class SimpleStatementLine(_BaseSimpleStatement, BaseStatement):
    __slots__ = _fields = ('body', 'leading_lines', 'trailing_whitespace')
    _child_fields = (('body', 1),)
    __init__ = _init_86


def _init_87(self, body, leading_whitespace=_DEFAULT_0, trailing_whitespace=_DEFAULT_4):
    self.body = body
    self.leading_whitespace = leading_whitespace
    self.trailing_whitespace = trailing_whitespace


class SimpleStatementSuite(_BaseSimpleStatement, BaseSuite):
    __slots__ = _fields = ('body', 'leading_whitespace', 'trailing_whitespace')
    _child_fields = (('body', 1), ('leading_whitespace', 2))
    __init__ = _init_87


class SimpleString(_BasePrefixedString, LiteralValue):
    __slots__ = _fields = ('value', 'lpar', 'rpar')
    _child_fields = ()
    __init__ = _init_39


_DEFAULT_13 = Colon()


def _init_88(self, lower, upper, step=None, first_colon=_DEFAULT_13, second_colon=MaybeSentinel.DEFAULT):
    self.lower = lower
    self.upper = upper
    self.step = step
    self.first_colon = first_colon
    self.second_colon = second_colon


class Slice(BaseSlice):
    __slots__ = _fields = ('lower', 'upper', 'step', 'first_colon', 'second_colon')
    _child_fields = (('lower', 2), ('upper', 2), ('step', 2), ('first_colon', 2), ('second_colon', 0))
    __init__ = _init_88


def _init_89(self, value, for_in, lbrace=_DEFAULT_5, rbrace=_DEFAULT_6, lpar=(), rpar=(), whitespace_before_value=_DEFAULT_1):
    self.value = value
    self.for_in = for_in
    self.lbrace = lbrace
    self.rbrace = rbrace
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_before_value = whitespace_before_value


class StarredDictComp(BaseDict, BaseComp):
    __slots__ = _fields = ('value', 'for_in', 'lbrace', 'rbrace', 'lpar', 'rpar', 'whitespace_before_value')
    _child_fields = (('value', 2), ('for_in', 2))
    __init__ = _init_89


def _init_90(self, value, comma=MaybeSentinel.DEFAULT, whitespace_before_value=_DEFAULT_1):
    self.value = value
    self.comma = comma
    self.whitespace_before_value = whitespace_before_value


class StarredDictElement(BaseDictElement):
    __slots__ = _fields = ('value', 'comma', 'whitespace_before_value')
    _child_fields = (('value', 2),)
    __init__ = _init_90


def _init_91(self, value, comma=MaybeSentinel.DEFAULT, lpar=(), rpar=(), whitespace_before_value=_DEFAULT_1):
    self.value = value
    self.comma = comma
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_before_value = whitespace_before_value


class StarredElement(BaseElement, BaseExpression, _BaseParenthesizedNode):
    __slots__ = _fields = ('value', 'comma', 'lpar', 'rpar', 'whitespace_before_value')
    _child_fields = (('value', 2),)
    __init__ = _init_91


def _init_92(self, value, slice, lbracket=_DEFAULT_10, rbracket=_DEFAULT_11, lpar=(), rpar=(), whitespace_after_value=_DEFAULT_1):
    self.value = value
    self.slice = slice
    self.lbracket = lbracket
    self.rbracket = rbracket
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_after_value = whitespace_after_value


class Subscript(BaseAssignTargetExpression, BaseDelTargetExpression):
    __slots__ = _fields = ('value', 'slice', 'lbracket', 'rbracket', 'lpar', 'rpar', 'whitespace_after_value')
    _child_fields = (('value', 2), ('slice', 1))
    __init__ = _init_92


def _init_93(self, slice, comma=MaybeSentinel.DEFAULT):
    self.slice = slice
    self.comma = comma


class SubscriptElement(CSTNode):
    __slots__ = _fields = ('slice', 'comma')
    _child_fields = (('slice', 2),)
    __init__ = _init_93


class Subtract(BaseBinaryOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


class SubtractAssign(BaseAugOp, _BaseOneTokenOp):
    __slots__ = _fields = ('whitespace_before', 'whitespace_after')
    _child_fields = ()
    __init__ = _init_1


def _init_94(self, parts, start='t"', end='"', lpar=(), rpar=()):
    self.parts = parts
    self.start = start
    self.end = end
    self.lpar = lpar
    self.rpar = rpar


class TemplatedString(_BasePrefixedString):
    __slots__ = _fields = ('parts', 'start', 'end', 'lpar', 'rpar')
    _child_fields = (('parts', 1),)
    __init__ = _init_94


class TemplatedStringExpression(BaseTemplatedStringContent):
    __slots__ = _fields = ('expression', 'conversion', 'format_spec', 'whitespace_before_expression', 'whitespace_after_expression', 'equal')
    _child_fields = (('expression', 2), ('format_spec', 0))
    __init__ = _init_42


class TemplatedStringText(BaseTemplatedStringContent):
    __slots__ = _fields = ('value',)
    _child_fields = ()
    __init__ = _init_0


def _init_95(self, body, handlers=(), orelse=None, finalbody=None, leading_lines=(), whitespace_before_colon=_DEFAULT_1):
    self.body = body
    self.handlers = handlers
    self.orelse = orelse
    self.finalbody = finalbody
    self.leading_lines = leading_lines
    self.whitespace_before_colon = whitespace_before_colon


class Try(BaseCompoundStatement):
    __slots__ = _fields = ('body', 'handlers', 'orelse', 'finalbody', 'leading_lines', 'whitespace_before_colon')
    _child_fields = (('body', 2), ('handlers', 1), ('orelse', 2), ('finalbody', 2))
    __init__ = _init_95


def _init_96(self, body, handlers, orelse=None, finalbody=None, leading_lines=(), whitespace_before_colon=_DEFAULT_1):
    self.body = body
    self.handlers = handlers
    self.orelse = orelse
    self.finalbody = finalbody
    self.leading_lines = leading_lines
    self.whitespace_before_colon = whitespace_before_colon


class TryStar(BaseCompoundStatement):
    __slots__ = _fields = ('body', 'handlers', 'orelse', 'finalbody', 'leading_lines', 'whitespace_before_colon')
    _child_fields = (('body', 2), ('handlers', 1), ('orelse', 2), ('finalbody', 2))
    __init__ = _init_96


def _init_97(self, elements, lpar=(_DEFAULT_7, ), rpar=(_DEFAULT_8, )):
    self.elements = elements
    self.lpar = lpar
    self.rpar = rpar


class Tuple(BaseAssignTargetExpression, BaseDelTargetExpression):
    __slots__ = _fields = ('elements', 'lpar', 'rpar')
    _child_fields = (('elements', 1),)
    __init__ = _init_97


def _init_98(self, name, value, type_parameters=None, whitespace_after_type=_DEFAULT_0, whitespace_after_name=MaybeSentinel.DEFAULT, whitespace_after_type_parameters=MaybeSentinel.DEFAULT, whitespace_after_equals=_DEFAULT_0, semicolon=MaybeSentinel.DEFAULT):
    self.name = name
    self.value = value
    self.type_parameters = type_parameters
    self.whitespace_after_type = whitespace_after_type
    self.whitespace_after_name = whitespace_after_name
    self.whitespace_after_type_parameters = whitespace_after_type_parameters
    self.whitespace_after_equals = whitespace_after_equals
    self.semicolon = semicolon


class TypeAlias(BaseSmallStatement):
    __slots__ = _fields = ('name', 'value', 'type_parameters', 'whitespace_after_type', 'whitespace_after_name', 'whitespace_after_type_parameters', 'whitespace_after_equals', 'semicolon')
    _child_fields = (('name', 2), ('value', 2), ('type_parameters', 2))
    __init__ = _init_98


def _init_99(self, param, comma=MaybeSentinel.DEFAULT, equal=MaybeSentinel.DEFAULT, star='', whitespace_after_star=_DEFAULT_1, default=None):
    self.param = param
    self.comma = comma
    self.equal = equal
    self.star = star
    self.whitespace_after_star = whitespace_after_star
    self.default = default


class TypeParam(CSTNode):
    __slots__ = _fields = ('param', 'comma', 'equal', 'star', 'whitespace_after_star', 'default')
    _child_fields = (('param', 2), ('default', 2))
    __init__ = _init_99


def _init_100(self, params=(), lbracket=_DEFAULT_10, rbracket=_DEFAULT_11):
    self.params = params
    self.lbracket = lbracket
    self.rbracket = rbracket


class TypeParameters(CSTNode):
    __slots__ = _fields = ('params', 'lbracket', 'rbracket')
    _child_fields = (('params', 1),)
    __init__ = _init_100


def _init_101(self, name, bound=None, colon=MaybeSentinel.DEFAULT):
    self.name = name
    self.bound = bound
    self.colon = colon


class TypeVar(CSTNode):
    __slots__ = _fields = ('name', 'bound', 'colon')
    _child_fields = (('name', 2), ('bound', 2))
    __init__ = _init_101


class TypeVarTuple(CSTNode):
    __slots__ = _fields = ('name', 'whitespace_after_star')
    _child_fields = (('name', 2),)
    __init__ = _init_79


def _init_102(self, operator, expression, lpar=(), rpar=()):
    self.operator = operator
    self.expression = expression
    self.lpar = lpar
    self.rpar = rpar


class UnaryOperation(BaseExpression):
    __slots__ = _fields = ('operator', 'expression', 'lpar', 'rpar')
    _child_fields = (('expression', 2),)
    __init__ = _init_102


def _init_103(self, test, body, orelse=None, leading_lines=(), whitespace_after_while=_DEFAULT_0, whitespace_before_colon=_DEFAULT_1):
    self.test = test
    self.body = body
    self.orelse = orelse
    self.leading_lines = leading_lines
    self.whitespace_after_while = whitespace_after_while
    self.whitespace_before_colon = whitespace_before_colon


class While(BaseCompoundStatement):
    __slots__ = _fields = ('test', 'body', 'orelse', 'leading_lines', 'whitespace_after_while', 'whitespace_before_colon')
    _child_fields = (('test', 2), ('body', 2), ('orelse', 2))
    __init__ = _init_103


def _init_104(self, items, body, asynchronous=None, leading_lines=(), lpar=MaybeSentinel.DEFAULT, rpar=MaybeSentinel.DEFAULT, whitespace_after_with=_DEFAULT_0, whitespace_before_colon=_DEFAULT_1):
    self.items = items
    self.body = body
    self.asynchronous = asynchronous
    self.leading_lines = leading_lines
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_after_with = whitespace_after_with
    self.whitespace_before_colon = whitespace_before_colon


class With(BaseCompoundStatement):
    __slots__ = _fields = ('items', 'body', 'asynchronous', 'leading_lines', 'lpar', 'rpar', 'whitespace_after_with', 'whitespace_before_colon')
    _child_fields = (('items', 1), ('body', 2))
    __init__ = _init_104


def _init_105(self, item, asname=None, comma=MaybeSentinel.DEFAULT):
    self.item = item
    self.asname = asname
    self.comma = comma


class WithItem(CSTNode):
    __slots__ = _fields = ('item', 'asname', 'comma')
    _child_fields = (('item', 2), ('asname', 2))
    __init__ = _init_105


def _init_106(self, value=None, lpar=(), rpar=(), whitespace_after_yield=MaybeSentinel.DEFAULT):
    self.value = value
    self.lpar = lpar
    self.rpar = rpar
    self.whitespace_after_yield = whitespace_after_yield


class Yield(BaseExpression):
    __slots__ = _fields = ('value', 'lpar', 'rpar', 'whitespace_after_yield')
    _child_fields = (('value', 2),)
    __init__ = _init_106
