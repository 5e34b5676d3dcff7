"""A Trainer subclass sums the step loss into an attribute in its training_step override

Source: https://github.com/huggingface/transformers/pull/6999
Style: hf-trainer
Kind: per-step work the analysis does not see as a loop: Trainer.training_step override accumulates the loss
"""
import torch
from datasets import Dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments


class LossTrackingTrainer(Trainer):
    """Reports the mean training loss since the last log, not just the last batch's."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.running_loss = torch.tensor(0.0)
        self.running_steps = 0

    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        inputs = self._prepare_inputs(inputs)
        outputs = model(**inputs)
        loss = outputs.loss / self.args.gradient_accumulation_steps
        self.accelerator.backward(loss)
        self.running_loss = self.running_loss.to(loss.device) + loss.detach()
        self.running_steps += 1
        return loss.detach()

    def log(self, logs, *args, **kwargs):
        if self.running_steps:
            logs["running_loss"] = (self.running_loss / self.running_steps).item()
            self.running_loss, self.running_steps = torch.tensor(0.0), 0
        super().log(logs, *args, **kwargs)


def main():
    tokenizer = AutoTokenizer.from_pretrained("distilbert-base-uncased")
    model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
    texts = [f"review number {i} was {'great' if i % 2 else 'awful'}" for i in range(50_000)]
    data = Dataset.from_dict({"text": texts, "label": [i % 2 for i in range(50_000)]})
    data = data.map(lambda b: tokenizer(b["text"], truncation=True, padding="max_length", max_length=64), batched=True)
    args = TrainingArguments("out/loss-tracking", per_device_train_batch_size=32, num_train_epochs=3,
                             logging_steps=500, save_strategy="no", report_to=[])
    LossTrackingTrainer(model=model, args=args, train_dataset=data).train()


if __name__ == "__main__":
    main()
