"""Learned contact dynamics: the final evaluation rolls the model out over the whole training set and keeps every predicted trajectory with its graph

Source: https://github.com/DAIRLab/dair_pll/pull/20
Style: plain
Kind: graph kept across steps in a list of model outputs: `trajectory_predict` rolls the learned dynamics forward for every trajectory of the data set with autograd on and keeps each predicted trajectory (and thus its whole rollout graph) until the evaluation ends; final evaluation allocates huge amounts of memory
"""
import torch
import torch.nn as nn


class ResidualContactDynamics(nn.Module):
    """x_{t+1} = x_t + dt * f(x_t, u_t) with a learned residual for contact impulses."""

    def __init__(self, state_dim=26, control_dim=6, hidden=256, dt=6.74e-3):
        super().__init__()
        self.dt = dt
        self.net = nn.Sequential(
            nn.Linear(state_dim + control_dim, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, state_dim),
        )

    def forward(self, x, u):
        return x + self.dt * self.net(torch.cat([x, u], dim=-1))


class SupervisedLearningExperiment:
    def __init__(self, model, train_set, valid_set, lr=1e-3):
        self.model = model
        self.train_set = train_set  # list of (states [T, n], controls [T, m])
        self.valid_set = valid_set
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def rollout(self, x0, controls):
        xs = [x0]
        for u in controls[:-1]:
            xs.append(self.model(xs[-1], u))
        return torch.stack(xs)

    def train_epoch(self, horizon=8):
        total = 0.0
        for states, controls in self.train_set:
            starts = torch.randint(0, states.shape[0] - horizon, (1,)).item()
            pred = self.rollout(states[starts], controls[starts:starts + horizon])
            loss = (pred - states[starts:starts + horizon]).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total / len(self.train_set)

    @torch.no_grad()
    def trajectory_predict(self, dataset):
        predictions, targets = [], []
        for states, controls in dataset:
            pred = self.rollout(states[0], controls)
            predictions.append(pred.detach())
            targets.append(states)
        return predictions, targets

    def evaluate(self, dataset):
        predictions, targets = self.trajectory_predict(dataset)
        pos_err = [(p[:, :3] - t[:, :3]).norm(dim=-1).mean() for p, t in zip(predictions, targets)]
        rot_err = [(p[:, 3:7] - t[:, 3:7]).norm(dim=-1).mean() for p, t in zip(predictions, targets)]
        return {
            "trajectory_pos_error": torch.stack(pos_err).mean().item(),
            "trajectory_rot_error": torch.stack(rot_err).mean().item(),
        }

    def run(self, epochs=200):
        for epoch in range(epochs):
            train_loss = self.train_epoch()
            if epoch % 20 == 0:
                print(f"epoch {epoch} train {train_loss:.5f} valid {self.evaluate(self.valid_set)}")
        # final evaluation over every stored trajectory
        return {"train": self.evaluate(self.train_set), "valid": self.evaluate(self.valid_set)}


def load_trajectories(path, device):
    data = torch.load(path)
    return [(s.to(device), u.to(device)) for s, u in zip(data["states"], data["controls"])]


if __name__ == "__main__":
    device = "cuda"
    train_set = load_trajectories("data/cube_toss_train.pt", device)
    valid_set = load_trajectories("data/cube_toss_valid.pt", device)
    experiment = SupervisedLearningExperiment(ResidualContactDynamics().to(device), train_set, valid_set)
    print(experiment.run())
