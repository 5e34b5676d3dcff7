"""Online STDP on an event stream: the learner's traces are built from spikes recorded with their graph

Source: https://github.com/fangwei123456/spikingjelly/issues/576
Source: https://github.com/fangwei123456/spikingjelly/pull/703
Style: plain
Kind: state fed into the next step: pre/post-synaptic traces updated from graph-attached spikes and carried from batch to batch, so every batch's forward graph stays chained to the traces (no backward ever runs through them)
"""
import torch
import torch.nn as nn


class ATanSpike(torch.autograd.Function):
    """Heaviside spike with an arctan surrogate gradient."""

    @staticmethod
    def forward(ctx, v):
        ctx.save_for_backward(v)
        return (v >= 0).to(v.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        (v,) = ctx.saved_tensors
        return grad_out / (1.0 + (torch.pi * v) ** 2)


class IFNeuron(nn.Module):
    def __init__(self, threshold=1.0):
        super().__init__()
        self.threshold = threshold
        self.v = None

    def reset(self):
        self.v = None

    def forward(self, x):
        v = x if self.v is None else self.v + x
        spike = ATanSpike.apply(v - self.threshold)
        self.v = v * (1.0 - spike)
        return spike


class STDPLearner:
    """Trace-based STDP for one fully connected synapse followed by a spiking layer."""

    def __init__(self, synapse, neuron, tau_pre=2.0, tau_post=2.0, a_plus=1e-3, a_minus=1e-3):
        self.synapse, self.tau_pre, self.tau_post = synapse, tau_pre, tau_post
        self.a_plus, self.a_minus = a_plus, a_minus
        self.pre_records, self.post_records = [], []
        self.trace_pre = None
        self.trace_post = None
        self.handles = [
            synapse.register_forward_hook(lambda m, inp, out: self.pre_records.append(inp[0].detach())),
            neuron.register_forward_hook(lambda m, inp, out: self.post_records.append(out.detach())),
        ]

    def step(self, on_grad=True):
        delta_w = torch.zeros_like(self.synapse.weight)
        while self.pre_records:
            pre = self.pre_records.pop(0)
            post = self.post_records.pop(0)
            if self.trace_pre is None:
                self.trace_pre, self.trace_post = torch.zeros_like(pre), torch.zeros_like(post)
            self.trace_pre = self.trace_pre - self.trace_pre / self.tau_pre + pre
            self.trace_post = self.trace_post - self.trace_post / self.tau_post + post
            delta_w += self.a_plus * post.t() @ self.trace_pre - self.a_minus * self.trace_post.t() @ pre
        if on_grad:
            grad = self.synapse.weight.grad
            self.synapse.weight.grad = -delta_w if grad is None else grad - delta_w
        return delta_w


def event_stream(n_batches, steps=8, batch=32, pixels=2 * 34 * 34, device="cpu"):
    for _ in range(n_batches):
        yield (torch.rand(steps, batch, pixels, device=device) < 0.05).float()


def main(n_batches=5000):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    net = nn.Sequential(
        nn.Linear(2 * 34 * 34, 400, bias=False), IFNeuron(),
        nn.Linear(400, 100, bias=False), IFNeuron(),
    ).to(device)
    learner = STDPLearner(net[2], net[3], tau_pre=2.0, tau_post=2.0)
    optimizer = torch.optim.SGD(net[2].parameters(), lr=1.0, momentum=0.0)

    for i, frames in enumerate(event_stream(n_batches, device=device)):
        optimizer.zero_grad()
        for t in range(frames.shape[0]):
            net(frames[t])
        learner.step(on_grad=True)
        optimizer.step()
        net[2].weight.data.clamp_(-1.0, 1.0)
        for m in net:
            if isinstance(m, IFNeuron):
                m.reset()
        if i % 500 == 0:
            print(i, net[2].weight.detach().abs().mean().item())


if __name__ == "__main__":
    main()
