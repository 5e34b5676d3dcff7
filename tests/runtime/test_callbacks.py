"""The Lightning and transformers LeakWatch callbacks on real trainers (CPU, 40 steps): a module that
keeps its losses warns (or raises, or stops) naming the line that computed them; the fixed one is
silent. Skipped where Lightning or transformers is not installed (CI installs both: .ci/run)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from leaklint.runtime import MemoryGrowthError, MemoryGrowthWarning, TooFewStepsWarning  # noqa: E402

HERE = Path(__file__).name
NEEDS_LIGHTNING = "Lightning is not installed (pip install lightning); CI installs it"
NEEDS_TRANSFORMERS = "transformers/accelerate not installed (pip install transformers accelerate); CI installs them"


def line_of(marker: str) -> int:
    lines = Path(__file__).read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if text.endswith(marker) and "line_of" not in text)


def growth_warnings(caught) -> list:
    return [w for w in caught if issubclass(w.category, MemoryGrowthWarning)]


def the_loss(net, x, y):
    return torch.nn.functional.mse_loss(net(x), y)  # the loss line


def small_net():
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))


def small_data():
    torch.manual_seed(0)
    return torch.randn(1024, 16), torch.randn(1024, 1)


# --- missing packages: one clear ImportError ------------------------------------------------------------
def test_without_lightning_the_import_error_says_what_to_install(monkeypatch):
    for name in ("lightning", "lightning.pytorch", "pytorch_lightning"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match="needs Lightning, which is not installed: pip install lightning"):
        from leaklint.runtime.lightning import LeakWatch  # noqa: F401


def test_without_transformers_the_import_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(ImportError, match="needs transformers, which is not installed: pip install transformers"):
        from leaklint.runtime.transformers import LeakWatch  # noqa: F401


# --- Lightning ----------------------------------------------------------------------------------------
def lightning_module(pl, keep_graph: bool):
    class Module(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = small_net()
            self.losses: list = []

        def training_step(self, batch, batch_idx):
            loss = the_loss(self.net, *batch)
            self.losses.append(loss if keep_graph else loss.item())  # kept for on_train_epoch_end
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    return Module()


def fit(pl, tmp_path, module, callback, max_steps: int = 40, **trainer_options):
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*small_data()), batch_size=8)
    trainer = pl.Trainer(
        max_steps=max_steps, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, default_root_dir=str(tmp_path),
        callbacks=[callback], **trainer_options,
    )
    trainer.fit(module, loader)  # the fit line
    return trainer


@pytest.fixture
def pl():
    pytest.importorskip("lightning", reason=NEEDS_LIGHTNING)
    import lightning.pytorch

    return lightning.pytorch


def test_lightning_leaky_module_warns_naming_its_loss_line(pl, tmp_path):
    from leaklint.runtime.lightning import LeakWatch

    watch = LeakWatch()
    with pytest.warns(MemoryGrowthWarning) as caught:
        trainer = fit(pl, tmp_path, lightning_module(pl, keep_graph=True), watch)
    (warning,) = growth_warnings(caught)
    assert Path(warning.filename).name == HERE and warning.lineno == line_of("# the fit line")
    assert f"{HERE}:{line_of('# the loss line')}" in str(warning.message)
    assert watch.report.host_grows and trainer.global_step == 40


def test_lightning_fixed_module_is_silent(pl, tmp_path):
    from leaklint.runtime.lightning import LeakWatch

    watch = LeakWatch(on_growth="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryGrowthWarning)
        warnings.simplefilter("error", TooFewStepsWarning)
        fit(pl, tmp_path, lightning_module(pl, keep_graph=False), watch)
    assert watch.report is not None and not watch.report.grows


def test_lightning_raise_ends_fit(pl, tmp_path):
    from leaklint.runtime.lightning import LeakWatch

    module = lightning_module(pl, keep_graph=True)
    with pytest.raises(MemoryGrowthError, match=f"{HERE}:{line_of('# the loss line')}"):
        fit(pl, tmp_path, module, LeakWatch(on_growth="raise"))
    assert len(module.losses) == 30


def test_lightning_stop_ends_fit_after_the_window_and_steps_are_optimizer_steps(pl, tmp_path):
    from leaklint.runtime.lightning import LeakWatch

    watch = LeakWatch(on_growth="stop")
    module = lightning_module(pl, keep_graph=True)
    with pytest.warns(MemoryGrowthWarning):
        trainer = fit(pl, tmp_path, module, watch, accumulate_grad_batches=2)
    assert trainer.global_step == 30 and len(module.losses) == 60
    assert watch.report.sites[0].tensors == pytest.approx(2)  # two batches' losses per optimizer step


def test_lightning_run_shorter_than_the_window_says_so(pl, tmp_path):
    from leaklint.runtime.lightning import LeakWatch

    watch = LeakWatch()
    with pytest.warns(TooFewStepsWarning, match="ended after 10 of the 30 steps"):
        fit(pl, tmp_path, lightning_module(pl, keep_graph=True), watch, max_steps=10)
    assert watch.report is None


def test_the_callback_also_runs_under_pytorch_lightning(tmp_path):
    pytest.importorskip("pytorch_lightning", reason="pytorch_lightning is not installed (pip install pytorch-lightning)")
    import pytorch_lightning

    from leaklint.runtime.lightning import LeakWatch

    with pytest.warns(MemoryGrowthWarning):
        fit(pytorch_lightning, tmp_path, lightning_module(pytorch_lightning, keep_graph=True), LeakWatch())


# --- transformers --------------------------------------------------------------------------------------
@pytest.fixture
def hf():
    pytest.importorskip("transformers", reason=NEEDS_TRANSFORMERS)
    pytest.importorskip("accelerate", reason=NEEDS_TRANSFORMERS)
    import transformers

    return transformers


def train(hf, tmp_path, keep_graph: bool, callback, **options):
    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = small_net()

        def forward(self, x, y):
            return {"loss": the_loss(self.net, x, y)}

    class Data(torch.utils.data.Dataset):
        def __init__(self) -> None:
            self.x, self.y = small_data()

        def __len__(self) -> int:
            return len(self.x)

        def __getitem__(self, index):
            return {"x": self.x[index], "y": self.y[index]}

    class KeepingTrainer(hf.Trainer):
        history: list = []

        def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
            loss = model(**inputs)["loss"]
            self.history.append(loss if keep_graph else loss.item())
            return loss

    arguments = hf.TrainingArguments(
        output_dir=str(tmp_path), max_steps=40, per_device_train_batch_size=8, report_to=[], save_strategy="no",
        logging_strategy="no", disable_tqdm=True, use_cpu=True, dataloader_num_workers=0, **options,
    )
    trainer = KeepingTrainer(model=Model(), args=arguments, train_dataset=Data(), callbacks=[callback])
    trainer.train()  # the train line
    return trainer


def test_transformers_leaky_trainer_warns_naming_its_loss_line(hf, tmp_path):
    from leaklint.runtime.transformers import LeakWatch

    watch = LeakWatch()
    with pytest.warns(MemoryGrowthWarning) as caught:
        trainer = train(hf, tmp_path, True, watch)
    (warning,) = growth_warnings(caught)
    assert Path(warning.filename).name == HERE and warning.lineno == line_of("# the train line")
    assert f"{HERE}:{line_of('# the loss line')}" in str(warning.message)
    assert watch.report.host_grows and trainer.state.global_step == 40


def test_transformers_fixed_trainer_is_silent(hf, tmp_path):
    from leaklint.runtime.transformers import LeakWatch

    watch = LeakWatch(on_growth="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryGrowthWarning)
        warnings.simplefilter("error", TooFewStepsWarning)
        train(hf, tmp_path, False, watch)
    assert watch.report is not None and not watch.report.grows


def test_transformers_raise_ends_training(hf, tmp_path):
    from leaklint.runtime.transformers import LeakWatch

    with pytest.raises(MemoryGrowthError, match=f"{HERE}:{line_of('# the loss line')}"):
        train(hf, tmp_path, True, LeakWatch(on_growth="raise"))


def test_transformers_stop_ends_training_after_the_window(hf, tmp_path):
    from leaklint.runtime.transformers import LeakWatch

    with pytest.warns(MemoryGrowthWarning):
        trainer = train(hf, tmp_path, True, LeakWatch(on_growth="stop", steps=20, warmup=4), gradient_accumulation_steps=2)
    assert trainer.state.global_step == 20
