"""Fitting a tensor-train decomposition stores every iteration's loss tensor in loss_history

Source: https://github.com/rballester/tntorch/pull/19
Style: plain
Kind: graph kept across steps in a history list
Runnable from: bench/leaks/cases/plain_tensor_train_fit_loss_history
"""
import time

import torch


def tt_full(cores):
    full = cores[0]
    for core in cores[1:]:
        full = torch.einsum("...a,abc->...bc", full, core)
    return full.squeeze(0).squeeze(-1)


def random_tt(shape, rank):
    ranks = [1] + [rank] * (len(shape) - 1) + [1]
    return [torch.randn(ranks[i], n, ranks[i + 1], requires_grad=True) for i, n in enumerate(shape)]


def optimize(cores, target, mask, max_iter=200, tol=1e-9, print_freq=100):
    optimizer = torch.optim.Adam(cores, lr=0.01)
    loss_history = []
    start = time.time()
    for it in range(max_iter):
        optimizer.zero_grad()
        approx = tt_full(cores)
        loss = ((approx - target)[mask] ** 2).mean()
        loss.backward()
        optimizer.step()
        loss_history.append(loss.item())
        if it % print_freq == 0:
            print(f"iter {it}: loss {loss.item():.6f} ({time.time() - start:.1f}s)")
        if len(loss_history) > 2 and abs(loss_history[-2] - loss_history[-1]) < tol:
            break
    return loss_history


if __name__ == "__main__":
    torch.manual_seed(0)
    picture = torch.rand(100, 100)
    target = picture.reshape(10, 10, 10, 10)
    mask = torch.rand_like(target) < 0.3
    cores = random_tt(target.shape, rank=8)
    history = optimize(cores, target, mask)
    print("final loss", float(history[-1]))
