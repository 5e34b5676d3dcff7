"""A training API endpoint builds a new DreamBooth trainer for every request and registers it globally

Source: https://github.com/d8ahazard/sd_dreambooth_extension/issues/1198
Style: diffusion
Kind: a model (with its optimizer state) created per request and kept in a module-level dict
"""
import uuid

import torch
import torch.nn as nn
from fastapi import FastAPI

app = FastAPI()
JOB_STATUS = {}


class DreamBoothTrainer:
    def __init__(self, model_dir, lr=2e-6):
        self.unet = nn.Sequential(nn.Conv2d(4, 320, 3, padding=1), nn.SiLU(), nn.Conv2d(320, 4, 3, padding=1))
        self.text_encoder = nn.Embedding(49408, 768)
        device = "cuda" if torch.cuda.is_available() else "cpu"
        self.unet.to(device)
        self.text_encoder.to(device)
        self.optimizer = torch.optim.AdamW(list(self.unet.parameters()) + list(self.text_encoder.parameters()), lr=lr)
        self.device = device
        self.model_dir = model_dir
        self.status = "created"

    def train(self, steps):
        self.status = "training"
        for _ in range(steps):
            latents = torch.randn(1, 4, 64, 64, device=self.device)
            noise = torch.randn_like(latents)
            loss = nn.functional.mse_loss(self.unet(latents + noise), noise)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        torch.save(self.unet.state_dict(), f"{self.model_dir}/unet.pt")
        self.status = "done"


@app.post("/dreambooth/start_training")
def start_training(model_name: str, steps: int = 800):
    job_id = str(uuid.uuid4())
    trainer = DreamBoothTrainer(f"models/{model_name}")
    JOB_STATUS[job_id] = trainer.status
    trainer.train(steps)
    JOB_STATUS[job_id] = trainer.status
    del trainer
    torch.cuda.empty_cache()
    return {"job_id": job_id, "status": JOB_STATUS[job_id]}


@app.get("/dreambooth/status")
def status(job_id: str):
    return {"status": JOB_STATUS.get(job_id, "unknown")}
