"""A Trainer subclass tracks its running loss from loss.detach() in a training_step override

Source: https://huggingface.co/docs/transformers/main_classes/trainer
Style: hf-trainer
Kind: negative: per-step accumulation into an attribute in Trainer.training_step (detached)
"""
import torch
from datasets import Dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments


class RunningLossTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tr_loss_sum = torch.tensor(0.0)
        self.tr_steps = 0

    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        inputs = self._prepare_inputs(inputs)
        loss = model(**inputs).loss / self.args.gradient_accumulation_steps
        self.accelerator.backward(loss)
        self.tr_loss_sum = self.tr_loss_sum.to(loss.device) + loss.detach()
        self.tr_steps += 1
        return loss.detach()

    def log(self, logs, *args, **kwargs):
        if self.tr_steps:
            logs["running_loss"] = (self.tr_loss_sum / self.tr_steps).item()
            self.tr_loss_sum, self.tr_steps = torch.tensor(0.0), 0
        super().log(logs, *args, **kwargs)


if __name__ == "__main__":
    tokenizer = AutoTokenizer.from_pretrained("distilbert-base-uncased")
    model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
    data = Dataset.from_dict({"text": [f"sample {i}" for i in range(20_000)], "label": [i % 2 for i in range(20_000)]})
    data = data.map(lambda b: tokenizer(b["text"], truncation=True, padding="max_length", max_length=32), batched=True)
    args = TrainingArguments("out/running-loss", per_device_train_batch_size=32, logging_steps=200, report_to=[])
    RunningLossTrainer(model=model, args=args, train_dataset=data).train()
