"""A Grad-CAM helper used as a context manager removes its hook handles after each image

Source: https://discuss.pytorch.org/t/how-to-remove-multiple-hooks/135442
Style: plain
Kind: negative: hooks registered on every image of a loop (every handle removed in the same iteration)
"""
import torch
import torch.nn as nn
import torchvision.models as models


class GradCAM:
    def __init__(self, model, layer):
        self.model, self.layer = model, layer
        self.activations, self.gradients, self.handles = None, None, []

    def __enter__(self):
        self.handles.append(self.layer.register_forward_hook(self._save_activation))
        self.handles.append(self.layer.register_full_backward_hook(self._save_gradient))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
        self.handles.clear()
        self.activations, self.gradients = None, None

    def _save_activation(self, module, inputs, output):
        self.activations = output.detach()

    def _save_gradient(self, module, grad_in, grad_out):
        self.gradients = grad_out[0].detach()

    def __call__(self, image, class_idx):
        self.model.zero_grad()
        self.model(image)[0, class_idx].backward()
        weights = self.gradients.mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.activations).sum(1)).squeeze(0)


if __name__ == "__main__":
    model = models.resnet18().eval()
    heatmaps = []
    for i in range(500):
        image = torch.rand(1, 3, 224, 224)
        with GradCAM(model, model.layer4) as cam:
            heatmaps.append(cam(image, class_idx=i % 1000).cpu())
