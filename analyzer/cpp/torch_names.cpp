#include "analyzer/cpp/torch_names.h"

#include <algorithm>
#include <span>

namespace tl::cpp::torch_names {
namespace {

// the namespaces a LibTorch entity is spelled in: torch::X and at::X
bool in_ns(std::string_view q, std::string_view ns_rest, std::span<const std::string_view> names) {
  for (std::string_view root : {"torch::", "at::", "c10::"}) {
    if (!q.starts_with(root)) continue;
    std::string_view rest = q.substr(root.size());
    if (!rest.starts_with(ns_rest)) continue;
    rest = rest.substr(ns_rest.size());
    for (auto n : names)
      if (rest == n) return true;
  }
  return false;
}

constexpr std::string_view kFactories[] = {
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "linspace", "eye", "tensor"};

constexpr std::string_view kTensorFunctions[] = {
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "linspace", "eye", "tensor",
    "from_blob", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randperm",
    "normal", "cat", "stack", "relu", "sigmoid", "tanh", "softmax", "log_softmax", "nll_loss", "mse_loss",
    "cross_entropy_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "l1_loss",
    "smooth_l1_loss", "max_pool2d", "avg_pool2d", "max_pool1d", "adaptive_avg_pool2d", "dropout", "matmul", "mm",
    "bmm", "sum", "mean", "exp", "log", "sqrt", "abs", "flatten", "where", "argmax", "clamp", "mul", "add",
    "sub", "div", "pow", "sin", "cos", "conv2d", "linear", "batch_norm", "layer_norm", "embedding", "gelu",
    "leaky_relu", "einsum", "transpose", "reshape", "squeeze", "unsqueeze", "max", "min", "norm", "tensordot",
    "outer", "exp2", "tril", "triu", "ones_like", "sign", "topk_values", "cumsum", "logsumexp", "square"};

// torch::nn::functional (F::) entry points that return one tensor, beyond kTensorFunctions
constexpr std::string_view kFunctional[] = {
    "cross_entropy", "kl_div", "huber_loss", "soft_margin_loss", "margin_ranking_loss", "cosine_similarity",
    "pairwise_distance", "normalize", "interpolate", "pad", "one_hot", "relu6", "elu", "selu", "silu", "mish",
    "softplus", "hardtanh", "logsigmoid", "glu", "dropout2d", "dropout3d", "avg_pool1d", "avg_pool3d", "max_pool3d",
    "adaptive_max_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool3d", "conv1d", "conv3d", "conv_transpose2d",
    "instance_norm", "group_norm", "embedding", "grid_sample", "affine_grid", "pixel_shuffle", "unfold", "fold",
    "gumbel_softmax", "softmin", "triplet_margin_loss", "cosine_embedding_loss", "poisson_nll_loss",
    "multilabel_margin_loss", "hinge_embedding_loss", "local_response_norm", "threshold", "hardshrink",
    "softshrink", "tanhshrink", "celu", "rrelu", "prelu"};

constexpr std::string_view kTensorMethods[] = {
    "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "long", "int", "view", "reshape", "mean", "sum",
    "argmax", "detach", "clone", "contiguous", "squeeze", "unsqueeze", "flatten", "t", "transpose", "permute",
    "mul", "add", "sub", "div", "pow", "exp", "log", "relu", "sigmoid", "tanh", "softmax", "log_softmax", "eq",
    "ne", "gt", "lt", "ge", "le", "abs", "sqrt", "neg", "index_select", "narrow", "slice", "select", "expand",
    "repeat", "masked_fill", "type_as", "view_as", "squeeze_", "unsqueeze_", "add_", "mul_", "sub_", "div_",
    "zero_", "fill_", "clamp", "clamp_", "norm", "std", "var", "matmul", "mm", "bmm", "to_dense", "requires_grad_",
    "exp_", "uniform_", "normal_", "copy_", "index", "max_values", "min_values", "expand_as", "reshape_as",
    "grad", "data", "square", "cumsum", "argmin", "floor", "round", "ceil", "sign", "clamp_min", "clamp_max",
    "lerp_", "item_tensor"};

constexpr std::string_view kHostValueMethods[] = {
    "item", "size", "sizes", "dim", "numel", "data_ptr", "is_cuda", "device", "dtype", "scalar_type", "defined",
    "nbytes", "element_size", "requires_grad", "is_contiguous", "equal", "allclose", "strides", "stride",
    "ndimension", "get_device", "toString", "backward", "print"};

constexpr std::string_view kTensorModules[] = {
    "Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "Dropout", "Dropout2d", "Dropout3d", "FeatureDropout", "ReLU", "ReLU6", "LeakyReLU",
    "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Sequential", "Embedding", "LayerNorm", "GroupNorm",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d",
    "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool2d",
    "Flatten", "Unflatten", "Identity", "Functional", "Bilinear", "PixelShuffle", "Upsample", "ZeroPad2d",
    "ReflectionPad2d", "ELU", "PReLU", "Softplus", "Hardtanh", "MSELoss", "L1Loss", "NLLLoss", "CrossEntropyLoss",
    "BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss"};

constexpr std::string_view kOtherModules[] = {
    "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell", "ModuleList", "ModuleDict", "Transformer",
    "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer",
    "MultiheadAttention", "EmbeddingBag", "ParameterList", "ParameterDict", "AnyModule"};

constexpr std::string_view kOptimizers[] = {
    "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "LBFGS", "Optimizer"};

constexpr std::string_view kConvolutions[] = {
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Conv1dImpl",
    "Conv2dImpl", "Conv3dImpl", "ConvTranspose1dImpl", "ConvTranspose2dImpl", "ConvTranspose3dImpl",
    "Conv1dOptions", "Conv2dOptions", "Conv3dOptions", "ConvTranspose1dOptions", "ConvTranspose2dOptions",
    "ConvTranspose3dOptions"};

bool in_ns(std::string_view q, std::string_view ns_rest, std::initializer_list<std::string_view> names) {
  return in_ns(q, ns_rest, std::span<const std::string_view>(names.begin(), names.size()));
}

bool listed(std::string_view s, std::span<const std::string_view> names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

}  // namespace

std::string_view last(std::string_view q) {
  auto p = q.rfind("::");
  return p == std::string_view::npos ? q : q.substr(p + 2);
}

bool is_device_constant(std::string_view q) {
  return in_ns(q, "", {"kCUDA", "kCPU", "kMPS", "kXPU", "DeviceType::CUDA", "DeviceType::CPU"});
}

bool is_tensor_factory(std::string_view q) { return in_ns(q, "", kFactories); }

bool is_convolution(std::string_view q) { return in_ns(q, "nn::", kConvolutions); }

bool library_module_returns_tensor(std::string_view q) {
  if (!in_ns(q, "nn::", kTensorModules)) {
    std::string_view l = last(q);
    if (!l.ends_with("Impl")) return false;
    std::string base(q.substr(0, q.size() - 4));
    return in_ns(base, "nn::", kTensorModules);
  }
  return true;
}

TypeKind type_kind(std::string_view q) {
  if (in_ns(q, "", {"Tensor"})) return TypeKind::Tensor;
  if (in_ns(q, "nn::", {"Module"})) return TypeKind::Module;
  if (in_ns(q, "nn::", kTensorModules) || in_ns(q, "nn::", kOtherModules)) return TypeKind::ModuleHolder;
  if (q.ends_with("Impl")) {
    std::string base(q.substr(0, q.size() - 4));
    if (in_ns(base, "nn::", kTensorModules) || in_ns(base, "nn::", kOtherModules)) return TypeKind::Module;
  }
  if (in_ns(q, "optim::", kOptimizers)) return TypeKind::Optimizer;
  if (in_ns(q, "", {"Device", "DeviceType"})) return TypeKind::Device;
  if (in_ns(q, "", {"NoGradGuard", "AutoGradMode", "InferenceMode"}) ||
      in_ns(q, "autograd::", {"NoGradGuard", "AutoGradMode"}))
    return TypeKind::GradGuard;
  if (in_ns(q, "data::", {"DataLoaderOptions"}) || in_ns(q, "", {"TensorOptions"})) return TypeKind::Other;
  return TypeKind::Unknown;
}

Type free_result(std::string_view q) {
  if (in_ns(q, "", kTensorFunctions) || in_ns(q, "nn::functional::", kTensorFunctions) ||
      in_ns(q, "nn::functional::", kFunctional))
    return {TypeKind::Tensor, "at::Tensor"};
  if (in_ns(q, "data::", {"make_data_loader"})) return {TypeKind::DataLoader, "torch::data::DataLoader"};
  if (in_ns(q, "", {"Device"})) return {TypeKind::Device, "torch::Device"};
  return {};
}

Type method_result(const Type& receiver, std::string_view method) {
  if (receiver.kind != TypeKind::Tensor) return {};
  if (listed(method, kTensorMethods)) return {TypeKind::Tensor, "at::Tensor"};
  if (listed(method, kHostValueMethods)) return {TypeKind::Other, ""};
  return {};
}

bool known(std::string_view q) {
  return type_kind(q) != TypeKind::Unknown || free_result(q).kind != TypeKind::Unknown || is_device_constant(q) ||
         in_ns(q, "", {"save", "load", "manual_seed", "NoGradGuard"}) ||
         in_ns(q, "nn::parallel::", {"data_parallel"}) || in_ns(q, "cuda::", {"synchronize", "is_available", "device_count"}) ||
         in_ns(q, "cuda::CUDACachingAllocator::", {"emptyCache"}) ||
         in_ns(q, "nn::", kConvolutions) || in_ns(q, "data::", {"make_data_loader", "DataLoaderOptions"});
}

}  // namespace tl::cpp::torch_names
