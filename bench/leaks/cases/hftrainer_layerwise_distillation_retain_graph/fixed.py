"""Layer-wise distillation backpropagates every layer's KL term with retain_graph=True

Source: https://github.com/pytorch/pytorch/issues/40005
Style: hf-trainer
Kind: retain_graph=True in a loop inside the training step keeps the graph alive
"""
import torch
import torch.nn.functional as F
from transformers import BertConfig, BertModel, Trainer


class LayerwiseDistillTrainer(Trainer):
    def __init__(self, *args, teacher=None, layer_map=(2, 5, 8, 11), **kwargs):
        super().__init__(*args, **kwargs)
        self.teacher = teacher.eval()
        self.layer_map = layer_map

    def training_step(self, model, inputs, num_items_in_batch=None):
        model.train()
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad():
            t_outputs = self.teacher(**inputs, output_hidden_states=True)
        s_outputs = model(**inputs, output_hidden_states=True)
        kl = torch.nn.KLDivLoss(reduction="batchmean")
        layer_losses = []
        for i, k in enumerate(self.layer_map):
            s_hidden = s_outputs.hidden_states[i + 1]
            t_hidden = t_outputs.hidden_states[k + 1]
            batch, rows, cols = s_hidden.shape
            output = kl(F.log_softmax(s_hidden, dim=2).view(batch * rows, cols), F.softmax(t_hidden, dim=2).view(batch * rows, cols))
            layer_losses.append(output)
        loss = torch.stack(layer_losses).mean()
        loss.backward()
        return loss.detach()


def build_models():
    teacher = BertModel(BertConfig(num_hidden_layers=12))
    student = BertModel(BertConfig(num_hidden_layers=4))
    return teacher, student


if __name__ == "__main__":
    from datasets import Dataset
    from transformers import TrainingArguments

    teacher, student = build_models()
    data = Dataset.from_dict({"input_ids": [[101] + [2000 + i % 500] * 126 + [102]] * 10_000, "attention_mask": [[1] * 128] * 10_000})
    args = TrainingArguments("out/distill", per_device_train_batch_size=16, report_to=[], remove_unused_columns=False)
    LayerwiseDistillTrainer(model=student, args=args, train_dataset=data, teacher=teacher).train()
