"""How sure LL309 (a ``del`` that frees nothing) and LL310 (predictions Lightning keeps for a caller
that drops them) are: the confidence says how much of the claim the code itself shows."""

from __future__ import annotations

import textwrap

from leaklint.findings import Confidence
from leaklint.registry import all_rules
from leaklint.testing import lint_snippet


def confidences(source: str, code: str) -> dict[int, Confidence]:
    findings, errors = lint_snippet(textwrap.dedent(source), [all_rules()[code]], min_confidence=Confidence.LOW)
    assert errors == []
    return {finding.line: finding.confidence for finding in findings}


SD3_LISTS = """
    import gc

    import torch
    from transformers import CLIPTextModel

    def main(model_id, prompt, unet, steps):
        text_encoder_one = CLIPTextModel.from_pretrained(model_id, subfolder="text_encoder").to("cuda")
        text_encoders = [text_encoder_one]
        with torch.no_grad():
            embeds = text_encoders[0](prompt)[0]
        del text_encoders
        gc.collect()
        for step in range(steps):
            unet(embeds).mean().backward()
    """


def test_a_del_followed_by_a_memory_freeing_call_is_high_confidence_and_medium_without():
    # gc.collect() / empty_cache() right after the del: the author means to give the memory back
    assert confidences(SD3_LISTS, "LL309") == {12: Confidence.HIGH}
    assert confidences(SD3_LISTS.replace("        gc.collect()\n", ""), "LL309") == {12: Confidence.MEDIUM}


PREPARED = """
    import gc

    from accelerate import Accelerator
    from diffusers import UNet2DConditionModel

    def main(args, loader):
        accelerator = Accelerator()
        unet = UNet2DConditionModel.from_pretrained(args.model, subfolder="unet")
        unet, loader = accelerator.prepare(unet, loader)
        for batch in loader:
            accelerator.backward(unet(batch).sample.mean())
        del unet
        gc.collect()
        for prompt in args.prompts:
            print(prompt)
    """


def test_a_model_an_accelerator_prepared_is_medium_confidence_even_with_a_freeing_call():
    # that the Accelerator keeps it is the library's behaviour, not something the file shows
    assert confidences(PREPARED, "LL309") == {13: Confidence.MEDIUM}


PREDICT = """
    import lightning.pytorch as pl
    import torch

    class Detector(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Linear(16, 4)

        def predict_step(self, batch, batch_idx):
            return self.net(batch)

    def run(loader, other_module):
        trainer = pl.Trainer(devices=1)
        trainer.predict(Detector(), loader)
        trainer.predict(other_module, loader)
    """


def test_predictions_of_a_module_of_the_file_are_high_confidence_and_of_another_module_medium():
    assert confidences(PREDICT, "LL310") == {15: Confidence.HIGH, 16: Confidence.MEDIUM}


def test_a_predict_step_that_returns_nothing_on_some_path_is_medium_confidence():
    source = PREDICT.replace("            return self.net(batch)", "            if batch is None:\n                return None\n            return self.net(batch)")
    assert confidences(source, "LL310") == {17: Confidence.MEDIUM, 18: Confidence.MEDIUM}


def test_a_list_and_an_accelerator_that_both_hold_the_model_are_both_named():
    # deleting the list alone would still leave the model in the Accelerator's own list
    source = PREPARED.replace(
        "        for batch in loader:\n", "        for batch in loader:\n            models_to_accumulate = [unet]\n"
    ).replace("        del unet\n", "        unet = accelerator.unwrap_model(unet)\n        del unet\n")
    findings, errors = lint_snippet(textwrap.dedent(source), [all_rules()["LL309"]])
    assert errors == [] and len(findings) == 1
    assert "'models_to_accumulate' still hold" in findings[0].message
    assert "keeps it too, until 'accelerator.free_memory()'" in findings[0].message
