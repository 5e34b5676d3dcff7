"""A Trainer subclass adds an input-gradient penalty with torch.autograd.grad(create_graph=True) in compute_loss

Source: https://github.com/pytorch/pytorch/issues/7343
Style: hf-trainer
Kind: negative: double backward with create_graph=True in every training step (the gradient comes back from torch.autograd.grad instead of being stored in a parameter's .grad, so there is no parameter <-> gradient cycle; the graph dies with the step)
"""
import torch
import torch.nn.functional as F
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments


class GradientPenaltyTrainer(Trainer):
    """Penalises the norm of d(loss)/d(input embeddings), a smoothness regulariser for text classifiers."""

    def __init__(self, *args, penalty_weight=0.1, **kwargs):
        super().__init__(*args, **kwargs)
        self.penalty_weight = penalty_weight

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        embeddings = model.get_input_embeddings()(inputs.pop("input_ids"))
        outputs = model(inputs_embeds=embeddings, **inputs)
        task_loss = F.cross_entropy(outputs.logits, labels)
        if model.training:
            (grad_emb,) = torch.autograd.grad(task_loss, embeddings, create_graph=True)
            penalty = grad_emb.pow(2).sum(dim=(1, 2)).mean()
            loss = task_loss + self.penalty_weight * penalty
        else:
            loss = task_loss
        return (loss, outputs) if return_outputs else loss


def main(train_dataset, eval_dataset, tokenizer):
    model = AutoModelForSequenceClassification.from_pretrained("roberta-base", num_labels=2)
    args = TrainingArguments(
        output_dir="out/grad-penalty",
        per_device_train_batch_size=32,
        per_device_eval_batch_size=64,
        learning_rate=2e-5,
        num_train_epochs=5,
        eval_strategy="epoch",
        logging_steps=50,
        report_to="none",
    )
    trainer = GradientPenaltyTrainer(model=model, args=args, train_dataset=train_dataset, eval_dataset=eval_dataset,
                                     processing_class=tokenizer, penalty_weight=0.1)
    trainer.train()
    print(trainer.evaluate())
