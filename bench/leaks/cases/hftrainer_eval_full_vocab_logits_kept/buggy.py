"""Seq2seq evaluation keeps the full-vocabulary logits of every example for compute_metrics

Source: https://github.com/huggingface/transformers/issues/10722
Style: hf-trainer
Kind: device memory grows without a graph: predictions (full logits) kept over a whole evaluation
"""
import numpy as np
import torch
from datasets import Dataset
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, Seq2SeqTrainer, Seq2SeqTrainingArguments


class LogitCollectingTrainer(Seq2SeqTrainer):
    """Runs prediction_step over the eval set and hands all logits to compute_metrics."""

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval", **gen_kwargs):
        loader = self.get_eval_dataloader(eval_dataset)
        logits_list, labels_list = [], []
        for inputs in loader:
            _, logits, labels = self.prediction_step(self.model, self._prepare_inputs(inputs), prediction_loss_only=False)
            logits_list.append(logits)  # leak: new:device-accumulation
            labels_list.append(labels)  # leak: new:device-accumulation
        metrics = self.compute_metrics((torch.cat(logits_list).float().cpu().numpy(), torch.cat(labels_list).cpu().numpy()))
        metrics = {f"{metric_key_prefix}_{k}": v for k, v in metrics.items()}
        self.log(metrics)
        return metrics


def token_accuracy(eval_pred):
    logits, labels = eval_pred
    preds = logits.argmax(-1)
    mask = labels != -100
    return {"token_accuracy": float(np.mean(preds[mask] == labels[mask]))}


if __name__ == "__main__":
    tokenizer = AutoTokenizer.from_pretrained("t5-base")
    model = AutoModelForSeq2SeqLM.from_pretrained("t5-base")
    data = Dataset.from_dict({"src": ["translate English to German: a cat"] * 200_000, "tgt": ["eine Katze"] * 200_000})
    data = data.map(lambda b: {**tokenizer(b["src"], max_length=77, truncation=True, padding="max_length"),
                               "labels": tokenizer(text_target=b["tgt"], max_length=77, padding="max_length")["input_ids"]}, batched=True)
    args = Seq2SeqTrainingArguments("out/clip-t5", per_device_eval_batch_size=64, predict_with_generate=False, report_to=[])
    trainer = LogitCollectingTrainer(model=model, args=args, eval_dataset=data, compute_metrics=token_accuracy)
    print(trainer.evaluate())
