"""An image-text embedding benchmark wrapper encodes a whole retrieval corpus with autograd enabled

Source: https://github.com/embeddings-benchmark/mteb/pull/1378
Style: plain
Kind: embeddings collected across batches with their graphs: the wrapper's encode loops run the vision and text towers without no_grad, and `.cpu()` keeps each batch's grad_fn, so every batch's activations stay alive until the corpus is encoded (OOM on the larger tasks)
"""
import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel, AutoProcessor


class ImageFolderList(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return Image.open(self.paths[i]).convert("RGB")


class DualEncoderWrapper:
    def __init__(self, name="openai/clip-vit-large-patch14", device="cuda"):
        self.device = device
        self.model = AutoModel.from_pretrained(name).to(device)
        self.processor = AutoProcessor.from_pretrained(name)
        self.model.eval()

    def get_image_embeddings(self, paths, batch_size=64):
        loader = DataLoader(ImageFolderList(paths), batch_size=batch_size, collate_fn=list, num_workers=8)
        all_embeddings = []
        for images in loader:
            inputs = self.processor(images=images, return_tensors="pt").to(self.device)
            feats = self.model.get_image_features(**inputs)  # leak: LL201
            all_embeddings.append(F.normalize(feats, dim=-1).cpu())  # leak: LL102
        return torch.cat(all_embeddings)

    def get_text_embeddings(self, texts, batch_size=256):
        all_embeddings = []
        for start in range(0, len(texts), batch_size):
            inputs = self.processor(text=texts[start:start + batch_size], padding=True, truncation=True,
                                    return_tensors="pt").to(self.device)
            feats = self.model.get_text_features(**inputs)  # leak: LL201
            all_embeddings.append(F.normalize(feats, dim=-1).cpu())  # leak: LL102
        return torch.cat(all_embeddings)


def recall_at_k(text_emb, image_emb, gold, k=10):
    hits = 0
    for start in range(0, len(text_emb), 1024):
        scores = text_emb[start:start + 1024] @ image_emb.T
        topk = scores.topk(k, dim=1).indices
        hits += (topk == gold[start:start + 1024, None]).any(dim=1).sum().item()
    return hits / len(text_emb)


def evaluate_retrieval(wrapper, image_paths, captions, caption_to_image):
    image_emb = wrapper.get_image_embeddings(image_paths)
    text_emb = wrapper.get_text_embeddings(captions)
    gold = torch.tensor(caption_to_image)
    return {f"recall@{k}": recall_at_k(text_emb, image_emb, gold, k) for k in (1, 5, 10)}


if __name__ == "__main__":
    import json
    with open("retrieval_task.json") as fh:
        task = json.load(fh)
    scores = evaluate_retrieval(DualEncoderWrapper(), task["images"], task["captions"], task["caption_to_image"])
    print(scores)
