"""PPO actor update for a LoRA policy: per-micro-batch log-probs and entropy are kept with their graph until the whole mini-batch is done

Source: https://github.com/verl-project/verl/pull/6699
Style: rl
Kind: graph kept across steps in a list: `forward_step` returns the token log-probs and entropy still attached to the autograd graph and the actor appends them to `outputs` for the metrics computed after the last micro-batch; each entry pins its micro-batch's checkpointed embedding output (it requires grad under PEFT's input-grad hook) and its gradient buffer, so long-sequence LoRA runs OOM as gradient accumulation grows
"""
import torch
import torch.nn.functional as F


def token_log_probs(logits, tokens):
    logp = F.log_softmax(logits.float(), dim=-1)
    return logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


def entropy_from_logits(logits):
    p = F.softmax(logits.float(), dim=-1)
    return torch.logsumexp(logits.float(), dim=-1) - (p * logits.float()).sum(-1)


class ActorUpdater:
    def __init__(self, policy, optimizer, clip=0.2, ent_coef=0.0, micro_batch_size=2):
        self.policy = policy
        self.optimizer = optimizer
        self.clip = clip
        self.ent_coef = ent_coef
        self.micro_batch_size = micro_batch_size

    def forward_step(self, mb):
        out = self.policy(input_ids=mb["input_ids"], attention_mask=mb["attention_mask"], use_cache=False)
        logits = out.logits[:, :-1]
        targets = mb["input_ids"][:, 1:]
        return token_log_probs(logits, targets), entropy_from_logits(logits)

    def update(self, batch):
        self.policy.train()
        self.optimizer.zero_grad()
        n = batch["input_ids"].shape[0]
        n_micro = (n + self.micro_batch_size - 1) // self.micro_batch_size
        outputs = []
        for i in range(0, n, self.micro_batch_size):
            mb = {k: v[i:i + self.micro_batch_size] for k, v in batch.items()}
            log_probs, entropy = self.forward_step(mb)
            mask = mb["response_mask"][:, 1:].float()
            ratio = torch.exp(log_probs - mb["old_log_probs"])
            adv = mb["advantages"]
            pg = -torch.min(ratio * adv, ratio.clamp(1 - self.clip, 1 + self.clip) * adv)
            pg_loss = (pg * mask).sum() / mask.sum()
            ent = (entropy * mask).sum() / mask.sum()
            loss = (pg_loss - self.ent_coef * ent) / n_micro
            loss.backward()
            outputs.append({"log_probs": log_probs, "entropy": entropy, "mask": mask})  # leak: LL102
        grad_norm = torch.nn.utils.clip_grad_norm_(self.policy.parameters(), 1.0)
        self.optimizer.step()
        return self.metrics(outputs, grad_norm)

    @staticmethod
    def metrics(outputs, grad_norm):
        ent = torch.cat([(o["entropy"] * o["mask"]).sum(1) / o["mask"].sum(1) for o in outputs])
        lp = torch.cat([(o["log_probs"] * o["mask"]).sum(1) for o in outputs])
        return {"actor/entropy": ent.mean().item(), "actor/seq_logp": lp.mean().item(), "actor/grad_norm": float(grad_norm)}


def train(policy, optimizer, rollout_source, iterations=1000):
    updater = ActorUpdater(policy, optimizer)
    for it in range(iterations):
        batch = rollout_source.next_batch()
        stats = updater.update(batch)
        if it % 10 == 0:
            print(it, stats)
