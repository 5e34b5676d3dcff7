"""GRPO trainer: the forward-only pass that recomputes old log-probs also stores each micro-batch's full-vocabulary logits

Source: https://github.com/THUDM/slime/pull/1506
Style: rl
Kind: tensors without a graph kept on the GPU for a whole prediction run: when the extra rollout data is collected, `forward_only` stores every micro-batch's logits (micro-batch x sequence x vocabulary, in fp32) in the list it returns, next to the log-probs it was meant to produce; GPU memory climbs micro-batch by micro-batch until the whole rollout batch is done (fix: keep only the reduced values)
"""
import torch
import torch.nn.functional as F


def gather_log_probs(logits, tokens):
    logp = F.log_softmax(logits.float(), dim=-1)
    return logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


@torch.no_grad()
def forward_only(model, rollout, micro_batch_size=4, collect_extra=True):
    model.eval()
    results = []
    for i in range(0, rollout["tokens"].shape[0], micro_batch_size):
        tokens = rollout["tokens"][i:i + micro_batch_size].cuda()
        mask = rollout["attention_mask"][i:i + micro_batch_size].cuda()
        logits = model(input_ids=tokens, attention_mask=mask).logits[:, :-1].float()
        entry = {"log_probs": gather_log_probs(logits, tokens[:, 1:])}
        if collect_extra:
            entry["logits"] = logits  # leak: LL202
        results.append(entry)
    return results


def entropy_from_results(results):
    ents = []
    for r in results:
        p = F.softmax(r["logits"], dim=-1)
        ents.append(-(p * torch.log(p + 1e-12)).sum(-1).mean())
    return torch.stack(ents).mean().item()


def grpo_step(model, ref_model, optimizer, rollout, clip=0.2, kl_coef=0.04, micro_batch_size=4):
    old = forward_only(model, rollout, micro_batch_size)
    ref = forward_only(ref_model, rollout, micro_batch_size, collect_extra=False)
    entropy = entropy_from_results(old)
    old_lp = torch.cat([r["log_probs"] for r in old])
    ref_lp = torch.cat([r["log_probs"] for r in ref])
    model.train()
    optimizer.zero_grad()
    n = rollout["tokens"].shape[0]
    for i in range(0, n, micro_batch_size):
        tokens = rollout["tokens"][i:i + micro_batch_size].cuda()
        mask = rollout["loss_mask"][i:i + micro_batch_size, 1:].cuda().float()
        adv = rollout["advantages"][i:i + micro_batch_size].cuda()[:, None]
        logits = model(input_ids=tokens, attention_mask=rollout["attention_mask"][i:i + micro_batch_size].cuda()).logits[:, :-1]
        lp = gather_log_probs(logits, tokens[:, 1:])
        ratio = torch.exp(lp - old_lp[i:i + micro_batch_size])
        pg = -torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv)
        kl = torch.exp(ref_lp[i:i + micro_batch_size] - lp) - (ref_lp[i:i + micro_batch_size] - lp) - 1
        loss = ((pg + kl_coef * kl) * mask).sum() / mask.sum() * tokens.shape[0] / n
        loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return {"entropy": entropy}
