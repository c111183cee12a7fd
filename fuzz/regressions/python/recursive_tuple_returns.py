# A recursive function whose returned tuple names what its own recursive call bound: following
# the origins of `value` once recursed without end (a stack overflow, found on a graph library's
# batch collation).
import torch


def _collate(key, values):
    if isinstance(values[0], dict):
        out = {}
        for k in values[0]:
            value, slices = _collate(k, [v[k] for v in values])
            out[k] = value
        return out, None
    if isinstance(values[0], (list, tuple)):
        value, slices = _collate(key, list(values[0]))
        return value, slices
    value = torch.cat(values)
    return value, len(values)


def collate(data_list):
    batch, slices = _collate("x", data_list)
    loader = torch.utils.data.DataLoader(batch)
    return loader, slices
