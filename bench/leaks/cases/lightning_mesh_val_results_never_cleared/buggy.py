"""Human mesh regression (PARE-like) LightningModule: per-batch validation errors are appended to a list on self that is never emptied

Source: https://github.com/Lightning-AI/pytorch-lightning/issues/14270
Style: lightning
Kind: a list on self grows with every validation batch of every epoch: `self.val_accuracy_results` gets each batch's per-sample joint and vertex errors (GPU tensors) and is only read, never cleared; memory use and epoch time grow a lot after epoch 0
"""
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torchvision


class MeshRegressor(nn.Module):
    def __init__(self, n_joints=24, n_verts=6890):
        super().__init__()
        backbone = torchvision.models.resnet50(weights="IMAGENET1K_V2")
        self.features = nn.Sequential(*list(backbone.children())[:-1])
        self.pose_head = nn.Linear(2048, n_joints * 3)
        self.vert_head = nn.Linear(2048, n_verts * 3)
        self.n_joints, self.n_verts = n_joints, n_verts

    def forward(self, images):
        f = self.features(images).flatten(1)
        joints = self.pose_head(f).view(-1, self.n_joints, 3)
        verts = self.vert_head(f).view(-1, self.n_verts, 3)
        return joints, verts


def mpjpe(pred, gt):
    pred = pred - pred[:, :1]
    gt = gt - gt[:, :1]
    return (pred - gt).norm(dim=-1).mean(dim=-1)


class PARETrainer(pl.LightningModule):
    def __init__(self, lr=5e-5):
        super().__init__()
        self.save_hyperparameters()
        self.model = MeshRegressor()
        self.val_accuracy_results = []

    def training_step(self, batch, batch_idx):
        joints, verts = self.model(batch["img"])
        loss = nn.functional.mse_loss(joints, batch["joints3d"]) + 0.5 * nn.functional.l1_loss(verts, batch["vertices"])
        self.log("train/loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        joints, verts = self.model(batch["img"])
        errors = {
            "mpjpe": mpjpe(joints, batch["joints3d"]) * 1000.0,
            "v2v": (verts - batch["vertices"]).norm(dim=-1).mean(dim=-1) * 1000.0,
        }
        self.val_accuracy_results.append(errors)  # leak: LL202
        return errors

    def on_validation_epoch_end(self):
        mpjpe_all = torch.cat([r["mpjpe"] for r in self.val_accuracy_results])
        v2v_all = torch.cat([r["v2v"] for r in self.val_accuracy_results])
        self.log("val/mpjpe", mpjpe_all.mean(), sync_dist=True)
        self.log("val/v2v", v2v_all.mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main():
    from pare_data import MixedDataModule  # project data module (3DPW / COCO-EFT / MPI-INF-3DHP)

    dm = MixedDataModule(batch_size=64, num_workers=8)
    model = PARETrainer()
    trainer = pl.Trainer(max_epochs=50, accelerator="gpu", devices=1, num_sanity_val_steps=0, log_every_n_steps=50)
    trainer.fit(model, datamodule=dm)


if __name__ == "__main__":
    main()
