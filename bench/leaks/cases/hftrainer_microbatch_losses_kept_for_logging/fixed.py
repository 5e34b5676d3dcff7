"""A Trainer with a fused linear+cross-entropy keeps every micro-batch's loss tensor for logging until the optimizer step

Source: https://github.com/ServiceNow/Fast-LLM/pull/486
Style: hf-trainer
Kind: graph kept across micro-batches: each loss tensor appended for logging holds its autograd node, whose context keeps the fused kernel's precomputed gradients (hidden-state and lm-head sized) on the GPU until the list is reduced after the optimizer step; with 128 accumulation steps that is 128 micro-batches of them (the report's engine is Fast-LLM's own; rebuilt here as a transformers Trainer subclass)
"""
import torch
import torch.nn.functional as F
from transformers import AutoModelForCausalLM, Trainer, TrainerCallback, TrainingArguments


class FusedLinearCrossEntropy(torch.autograd.Function):
    """Computes the loss and its gradients in one chunked pass, so full-vocab logits never coexist."""

    @staticmethod
    def forward(ctx, hidden, weight, labels, chunk=4096):
        mask = labels != -100
        n = mask.sum().clamp(min=1)
        grad_hidden, grad_weight = torch.zeros_like(hidden), torch.zeros_like(weight)
        total = hidden.new_zeros(())
        for start in range(0, hidden.shape[0], chunk):
            h, y, m = hidden[start:start + chunk], labels[start:start + chunk], mask[start:start + chunk]
            logits = (h @ weight.t()).float()
            total += F.cross_entropy(logits, y.clamp(min=0), reduction="none")[m].sum()
            probs = logits.softmax(-1)
            probs[torch.arange(len(y)), y.clamp(min=0)] -= 1.0
            probs = (probs * m[:, None]).to(h.dtype) / n
            grad_hidden[start:start + chunk] = probs @ weight
            grad_weight += probs.t() @ h
        ctx.context = {"grad_hidden": grad_hidden, "grad_weight": grad_weight}
        return total / n

    @staticmethod
    def backward(ctx, grad_out):
        context = ctx.context
        return grad_out * context["grad_hidden"], grad_out * context["grad_weight"], None, None


class FusedLossTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.micro_losses = []
        self.add_callback(ReduceMicroLosses(self))

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model.model(**inputs)
        hidden = outputs.last_hidden_state[:, :-1].reshape(-1, outputs.last_hidden_state.shape[-1])
        lm_head = model.get_output_embeddings().weight
        loss = FusedLinearCrossEntropy.apply(hidden, lm_head, labels[:, 1:].reshape(-1))
        self.micro_losses.append(loss.detach())
        return (loss, outputs) if return_outputs else loss


class ReduceMicroLosses(TrainerCallback):
    """After each optimizer step, average the micro-batch losses of that step for the logs."""

    def __init__(self, trainer):
        self.trainer = trainer

    def on_step_end(self, args, state, control, **kwargs):
        losses = self.trainer.micro_losses
        if losses:
            state.log_history.append({"step": state.global_step, "micro_loss_mean": torch.stack(losses).mean().item(), "micro_loss_max": torch.stack(losses).max().item()})
            losses.clear()


def main(train_dataset, data_collator):
    model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-0.5B", torch_dtype=torch.bfloat16)
    args = TrainingArguments(
        output_dir="out/fused-ce",
        per_device_train_batch_size=1,
        gradient_accumulation_steps=128,
        learning_rate=1e-5,
        bf16=True,
        logging_steps=1,
        max_steps=2000,
        report_to="none",
    )
    trainer = FusedLossTrainer(model=model, args=args, train_dataset=train_dataset, data_collator=data_collator)
    trainer.train()
