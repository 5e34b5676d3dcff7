"""RL experiment lab: every session gets a live-plot grapher whose pyplot figure is never closed, and every trial saves a summary plot without closing it

Source: https://github.com/kengz/openai_lab/pull/44
Style: rl
Kind: pyplot figures created per session (in the grapher's constructor) and per trial (in the summary-plot helper) and never closed: pyplot keeps every one of them, so a hyperparameter search of many trials x sessions grows the lab's memory until the machine swaps
"""
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

OBS_DIM = 4
N_ACTIONS = 2


class SessionGrapher:
    """Live graph of one session: total reward, exploration rate and loss per episode."""

    def __init__(self, session_id, filename):
        self.filename = filename
        self.figure = plt.figure(facecolor="white", figsize=(8, 9))
        self.figure.suptitle(session_id)
        self.axes = {name: self.figure.add_subplot(311 + i, title=name) for i, name in enumerate(("reward", "epsilon", "loss"))}
        self.lines = {name: ax.plot([], [])[0] for name, ax in self.axes.items()}

    def update(self, history):
        for name, line in self.lines.items():
            line.set_data(np.arange(len(history[name])), history[name])
            self.axes[name].relim()
            self.axes[name].autoscale_view()
        self.figure.savefig(self.filename)

    def close(self):
        plt.close(self.figure)


class LinearQAgent:
    def __init__(self, lr, gamma, rng):
        self.w = np.zeros((OBS_DIM, N_ACTIONS))
        self.lr, self.gamma, self.rng = lr, gamma, rng

    def act(self, obs, epsilon):
        return int(self.rng.integers(N_ACTIONS)) if self.rng.random() < epsilon else int(np.argmax(obs @ self.w))

    def learn(self, obs, action, reward, next_obs, done):
        target = reward + (0.0 if done else self.gamma * np.max(next_obs @ self.w))
        error = target - obs @ self.w[:, action]
        self.w[:, action] += self.lr * error * obs
        return error ** 2


def run_session(session_id, params, out_dir, episodes=300, seed=0):
    rng = np.random.default_rng(seed)
    agent = LinearQAgent(params["lr"], params["gamma"], rng)
    grapher = SessionGrapher(session_id, os.path.join(out_dir, f"{session_id}.png"))
    history = {"reward": [], "epsilon": [], "loss": []}
    epsilon = 1.0
    for episode in range(episodes):
        obs, total, losses = rng.standard_normal(OBS_DIM), 0.0, []
        for _ in range(200):
            action = agent.act(obs, epsilon)
            next_obs = obs + 0.1 * rng.standard_normal(OBS_DIM) + 0.05 * (action - 0.5)
            done = bool(abs(next_obs[0]) > 2.4)
            losses.append(agent.learn(obs, action, 1.0, next_obs, done))
            total += 1.0
            obs = next_obs
            if done:
                break
        epsilon = max(0.05, epsilon * params["epsilon_decay"])
        history["reward"].append(total)
        history["epsilon"].append(epsilon)
        history["loss"].append(float(np.mean(losses)))
        if episode % 20 == 0:
            grapher.update(history)
    grapher.close()
    return float(np.mean(history["reward"][-100:]))


def plot_trial_summary(trial_id, scores, out_dir):
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(range(len(scores)), scores)
    ax.set_title(f"{trial_id}: mean reward of last 100 episodes per session")
    fig.savefig(os.path.join(out_dir, f"{trial_id}_summary.png"))
    plt.close(fig)


def run_experiment(grid, sessions_per_trial=5, out_dir="data/lab"):
    os.makedirs(out_dir, exist_ok=True)
    results = []
    for trial_num, params in enumerate(grid):
        trial_id = f"trial_{trial_num:03d}"
        scores = [run_session(f"{trial_id}_s{s}", params, out_dir, seed=s) for s in range(sessions_per_trial)]
        plot_trial_summary(trial_id, scores, out_dir)
        results.append({"trial": trial_id, "params": params, "score": float(np.mean(scores))})
    with open(os.path.join(out_dir, "results.json"), "w") as handle:
        json.dump(results, handle, indent=2)
    return max(results, key=lambda r: r["score"])


if __name__ == "__main__":
    grid = [{"lr": lr, "gamma": g, "epsilon_decay": d}
            for lr in (0.001, 0.01, 0.1) for g in (0.9, 0.99) for d in (0.95, 0.99, 0.995)]
    print(run_experiment(grid))
