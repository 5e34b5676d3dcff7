"""Moving semantic transfer (domain adaptation): class centroids kept on the trainer are blended with each batch's features and detached before being stored

Source: https://github.com/EasonApolo/mstn/issues/4
Style: plain
Kind: negative: resembles a state on self fed into the next step with its graph (moving class centroids updated every step from graph-attached features); the blended centroids are used in this step's loss and only their detached copies are kept, so no earlier batch's graph survives the step
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N_CLASSES = 31
FEAT_DIM = 256


class FeatureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 64, 5, stride=2), nn.ReLU(), nn.Conv2d(64, 128, 5, stride=2), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, FEAT_DIM), nn.ReLU(),
        )

    def forward(self, x):
        return self.body(x)


class MovingSemanticTrainer:
    def __init__(self, device, decay=0.3, lam=0.1):
        self.device = device
        self.features = FeatureNet().to(device)
        self.classifier = nn.Linear(FEAT_DIM, N_CLASSES).to(device)
        self.domain_critic = nn.Sequential(nn.Linear(FEAT_DIM, 512), nn.ReLU(), nn.Linear(512, 1)).to(device)
        params = list(self.features.parameters()) + list(self.classifier.parameters())
        self.opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9)
        self.opt_critic = torch.optim.SGD(self.domain_critic.parameters(), lr=1e-3, momentum=0.9)
        self.decay, self.lam = decay, lam
        self.src_centroids = torch.zeros(N_CLASSES, FEAT_DIM, device=device)
        self.tgt_centroids = torch.zeros(N_CLASSES, FEAT_DIM, device=device)

    @staticmethod
    def batch_centroids(feats, labels):
        onehot = F.one_hot(labels, N_CLASSES).float()
        counts = onehot.sum(0).clamp(min=1).unsqueeze(1)
        return onehot.t() @ feats / counts

    def semantic_loss(self, src_feats, src_labels, tgt_feats, tgt_logits):
        src_now = self.batch_centroids(src_feats, src_labels)
        tgt_now = self.batch_centroids(tgt_feats, tgt_logits.argmax(1))
        src = (1 - self.decay) * self.src_centroids + self.decay * src_now
        tgt = (1 - self.decay) * self.tgt_centroids + self.decay * tgt_now
        self.src_centroids = src.detach()
        self.tgt_centroids = tgt.detach()
        return F.mse_loss(src, tgt)

    def train_step(self, src_x, src_y, tgt_x):
        src_f, tgt_f = self.features(src_x), self.features(tgt_x)
        src_logits, tgt_logits = self.classifier(src_f), self.classifier(tgt_f)
        critic_loss = F.binary_cross_entropy_with_logits(self.domain_critic(src_f.detach()), torch.ones(len(src_f), 1, device=self.device)) + \
            F.binary_cross_entropy_with_logits(self.domain_critic(tgt_f.detach()), torch.zeros(len(tgt_f), 1, device=self.device))
        self.opt_critic.zero_grad()
        critic_loss.backward()
        self.opt_critic.step()
        adv = F.binary_cross_entropy_with_logits(self.domain_critic(tgt_f), torch.ones(len(tgt_f), 1, device=self.device))
        loss = F.cross_entropy(src_logits, src_y) + self.lam * (adv + self.semantic_loss(src_f, src_y, tgt_f, tgt_logits))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def main(steps=20000, batch=64):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    trainer = MovingSemanticTrainer(device)
    for step in range(steps):
        src_x = torch.randn(batch, 3, 64, 64, device=device)
        src_y = torch.randint(0, N_CLASSES, (batch,), device=device)
        tgt_x = torch.randn(batch, 3, 64, 64, device=device)
        loss = trainer.train_step(src_x, src_y, tgt_x)
        if step % 500 == 0:
            print(f"step {step}: loss {loss:.4f}")


if __name__ == "__main__":
    main()
