"""Seed optimisation re-creates the model and trainer per seed; the model card data still points at the old trainer

Source: https://github.com/huggingface/sentence-transformers/issues/3136
Style: hf-trainer
Kind: a model and trainer created per seed stay referenced (model.model_card_data.trainer keeps the trainer, the trainer keeps the model): memory grows seed after seed
"""
import gc

import torch
from datasets import Dataset
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, SentenceTransformerTrainingArguments
from sentence_transformers.evaluation import EmbeddingSimilarityEvaluator
from sentence_transformers.losses import CosineSimilarityLoss


def sts_split(n, seed):
    g = torch.Generator().manual_seed(seed)
    s1 = [f"a sentence about topic {int(i)}" for i in torch.randint(0, 50, (n,), generator=g)]
    s2 = [f"another sentence about topic {int(i)}" for i in torch.randint(0, 50, (n,), generator=g)]
    score = [float(a.split()[-1] == b.split()[-1]) for a, b in zip(s1, s2)]
    return Dataset.from_dict({"sentence1": s1, "sentence2": s2, "score": score})


def main(seed_count=20, stop_after=0.3):
    train, dev = sts_split(20_000, 0), sts_split(1_500, 1)
    evaluator = EmbeddingSimilarityEvaluator(dev["sentence1"], dev["sentence2"], dev["score"], name="sts-dev")
    results = {}
    for seed in range(seed_count):
        torch.manual_seed(seed)
        model = SentenceTransformer("bert-base-uncased")
        args = SentenceTransformerTrainingArguments(f"out/seed-{seed}", num_train_epochs=1, per_device_train_batch_size=16,
                                                    max_steps=int(stop_after * len(train) / 16), seed=seed, report_to=[])
        trainer = SentenceTransformerTrainer(
            model=model, args=args, train_dataset=train, loss=CosineSimilarityLoss(model), evaluator=evaluator)
        trainer.train()
        results[seed] = evaluator(model)["sts-dev_spearman_cosine"]
        print(f"seed {seed}: {results[seed]:.4f}, cuda {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
        model.model_card_data.trainer = None
        del trainer, model
        gc.collect()
        torch.cuda.empty_cache()
    best = max(results, key=results.get)
    print("best seed", best, results[best])


if __name__ == "__main__":
    main()
