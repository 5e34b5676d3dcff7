"""watch_steps: a real loop watched from inside; steps end at optimizer.step() or watch.step(), the
verdict comes once after the window (warn or raise, naming the line), and the meters stop
whatever happens to the block."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from leaklint.runtime import MemoryGrowthError, MemoryGrowthWarning, TooFewStepsWarning, watch_steps  # noqa: E402
from leaklint.runtime.steps import FirstOptimizer  # noqa: E402

HERE = Path(__file__).name


def line_of(marker: str) -> int:
    """The line of this file that ends with ``marker`` (so the test survives edits above it)."""
    lines = Path(__file__).read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if text.endswith(marker) and "line_of" not in text)


def make_training(keep_graph: bool):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    history: list = []

    def step() -> None:
        optimizer.zero_grad()
        loss = model(torch.randn(8, 16)).pow(2).mean()  # the loss
        loss.backward()
        optimizer.step()  # the boundary
        history.append(loss if keep_graph else loss.item())

    return step


def meters_stopped() -> bool:
    """No profiler running and no dispatch mode (the labeler) left on torch's stack."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    return not torch.autograd.profiler._is_profiler_enabled and _get_current_dispatch_mode() is None


def post_hooks() -> int:
    from torch.optim import optimizer

    return len(optimizer._global_optimizer_post_hooks)


def test_a_leaky_loop_warns_once_at_its_optimizer_step_naming_the_line():
    step = make_training(keep_graph=True)
    hooks = post_hooks()
    with pytest.warns(MemoryGrowthWarning) as caught:
        with watch_steps(steps=20, warmup=4) as watch:
            for _ in range(40):
                step()
    assert len(caught) == 1
    warning = caught[0]
    assert Path(warning.filename).name == HERE and warning.lineno == line_of("# the boundary")
    message = str(warning.message)
    assert "grows" in message and "host memory" in message
    assert f"{HERE}:{line_of('# the loss')}" in message
    assert watch.report is not None and watch.report.host_grows and watch.seen == 20
    assert post_hooks() == hooks and meters_stopped()


def test_raise_stops_the_loop_at_the_step_that_completes_the_window():
    step = make_training(keep_graph=True)
    ran = 0
    with pytest.raises(MemoryGrowthError) as raised:
        with watch_steps(steps=20, warmup=4, on_growth="raise"):
            for _ in range(40):
                ran += 1
                step()
    assert ran == 20
    assert isinstance(raised.value, AssertionError) and raised.value.report.grows
    assert f"{HERE}:{line_of('# the loss')}" in str(raised.value)
    assert meters_stopped()


def test_the_fixed_loop_is_silent_and_the_steps_after_the_window_cost_no_hook():
    step = make_training(keep_graph=False)
    hooks = post_hooks()
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryGrowthWarning)
        with watch_steps(steps=20, warmup=4) as watch:
            for index in range(30):
                step()
                if index == 19:
                    assert post_hooks() == hooks  # judged at step 20: the hook is gone
    assert watch.report is not None and not watch.report.grows


def test_watch_step_ends_steps_of_a_loop_without_an_optimizer():
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 64)
    outputs = []
    with pytest.warns(MemoryGrowthWarning) as caught:
        with watch_steps(steps=20, warmup=4) as watch:
            for _ in range(20):
                outputs.append(model(torch.randn(32, 64)))  # kept with its graph
                watch.step()
    message = str(caught[0].message)
    assert "live cpu tensor memory" in message and f"{HERE}:{line_of('# kept with its graph')}" in message
    assert watch.report.tensor_grows


def test_the_first_watch_step_drops_the_optimizer_steps_counted_before_it():
    step = make_training(keep_graph=False)
    with pytest.warns(TooFewStepsWarning):
        with watch_steps(steps=20, warmup=4) as watch:
            for _ in range(3):
                step()
            assert watch.seen == 3
            step()
            watch.step()
            assert watch.seen == 1  # the optimizer no longer ends steps
            step()
            assert watch.seen == 1


def test_two_optimizers_make_one_step():
    torch.manual_seed(0)
    generator, critic = torch.nn.Linear(4, 4), torch.nn.Linear(4, 1)
    g_opt, c_opt = torch.optim.SGD(generator.parameters(), lr=0.1), torch.optim.SGD(critic.parameters(), lr=0.1)
    with pytest.warns(TooFewStepsWarning, match="after 5 of the 20 steps"):
        with watch_steps(steps=20, warmup=4) as watch:
            for _ in range(5):
                critic(generator(torch.randn(2, 4))).mean().backward()
                c_opt.step()
                g_opt.step()
    assert watch.seen == 5 and watch.report is None and meters_stopped()


def test_first_optimizer_gives_way_when_dropped():
    first = FirstOptimizer()
    a = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1)
    b = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1)
    assert first.is_first(a) and not first.is_first(b) and first.is_first(a)
    del a
    assert first.is_first(b)


def test_a_block_that_ends_inside_the_tensor_phase_stops_the_meters_and_says_why():
    step = make_training(keep_graph=True)
    with pytest.warns(TooFewStepsWarning, match="ended after 15 of the 20 steps") as caught:
        with watch_steps(steps=20, warmup=4) as watch:
            for _ in range(15):
                step()
    assert Path(caught[0].filename).name == HERE
    assert watch.report is None and meters_stopped()


def test_a_block_that_raises_stops_the_meters_and_adds_nothing():
    step = make_training(keep_graph=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(KeyError):
            with watch_steps(steps=20, warmup=4):
                for _ in range(15):
                    step()
                raise KeyError("the user's own error")
    assert meters_stopped()


def test_no_step_at_all_is_said_so():
    with pytest.warns(TooFewStepsWarning, match="no step ended"):
        with watch_steps():
            pass


def test_one_watcher_at_a_time():
    step = make_training(keep_graph=False)
    with pytest.warns(TooFewStepsWarning):
        with watch_steps(steps=20, warmup=4):
            step()
            with pytest.raises(RuntimeError, match="one run at a time"):
                with watch_steps(steps=20, warmup=4) as inner:
                    inner.step()
    assert meters_stopped()


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"on_growth": "stop"}, "on_growth must be one of 'warn', 'raise'"),
        ({"device": "gpu"}, "device must be"),
        ({"tolerance": "lots"}, "not a size"),
        ({"steps": 8, "warmup": 5}, "steps must exceed warmup"),
    ],
)
def test_bad_arguments_fail_before_the_run(arguments, message):
    with pytest.raises(ValueError, match=message):
        watch_steps(**arguments)
