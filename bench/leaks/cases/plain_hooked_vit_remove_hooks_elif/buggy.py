"""A hooked ViT's reset_hooks only removes forward hooks in a branch that is never taken

Source: https://github.com/Prisma-Multimodal/ViT-Prisma/issues/188
Style: plain
Kind: hooks registered by a helper on every circuit-discovery run and never removed
"""
import torch
import torch.nn as nn


class HookPoint(nn.Module):
    def __init__(self):
        super().__init__()
        self.fwd_hooks, self.bwd_hooks = [], []

    def add_hook(self, hook, dir="fwd"):
        if dir == "fwd":
            self.fwd_hooks.append(self.register_forward_hook(lambda m, i, o: hook(o, hook=m)))  # leak: new:hooks-per-epoch
        else:
            self.bwd_hooks.append(self.register_full_backward_hook(lambda m, gi, go: hook(go[0], hook=m)))

    def remove_hooks(self, dir="fwd"):
        def _remove(handles):
            for handle in handles:
                handle.remove()
            return []

        if dir == "fwd" or dir == "both":
            if self.bwd_hooks:
                self.fwd_hooks = _remove(self.fwd_hooks)
        elif dir == "bwd" or dir == "both":
            self.bwd_hooks = _remove(self.bwd_hooks)

    def forward(self, x):
        return x


class HookedViT(nn.Module):
    def __init__(self, depth=12, dim=768):
        super().__init__()
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(dim, 12, 4 * dim, batch_first=True) for _ in range(depth)])
        self.hook_resid = nn.ModuleList([HookPoint() for _ in range(depth)])

    def forward(self, x):
        for block, hook in zip(self.blocks, self.hook_resid):
            x = hook(block(x))
        return x

    def reset_hooks(self):
        for hp in self.hook_resid:
            hp.remove_hooks("both")


def attribution_patching(model, clean, corrupted):
    cache = {}
    for i, hp in enumerate(model.hook_resid):
        hp.add_hook(lambda act, hook, i=i: cache.__setitem__(i, act.detach()), dir="fwd")
    with torch.no_grad():
        model(clean)
    scores = [((cache[i] - model(corrupted)) ** 2).mean().item() for i in range(len(model.hook_resid))]
    model.reset_hooks()
    return scores


if __name__ == "__main__":
    vit = HookedViT().eval()
    for prompt_pair in range(500):
        print(prompt_pair, attribution_patching(vit, torch.randn(4, 197, 768), torch.randn(4, 197, 768))[:3])
