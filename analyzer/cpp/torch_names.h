// What the fast path knows of the LibTorch API by name: types, tensor-returning functions and
// methods, device constants. Names are qualified (`torch::nn::Conv2d`); `at::` spellings of the
// same entities are listed too.
#pragma once
#include <string>
#include <string_view>

#include "analyzer/cpp/model.h"

namespace tl::cpp::torch_names {

// The last `::` component of a qualified name.
std::string_view last(std::string_view q);
// Is `q` a LibTorch name trainlint knows (for `using namespace torch;` resolution)?
bool known(std::string_view q);
// The kind of a LibTorch type name (Unknown when not a LibTorch type trainlint knows).
TypeKind type_kind(std::string_view q);
// torch::kCUDA, torch::kCPU, at::DeviceType::CUDA, ...
bool is_device_constant(std::string_view q);
// Tensor creation functions (torch::zeros, ones, empty, full, rand, randn, randint, arange,
// linspace, eye, tensor), the list of TL305.
bool is_tensor_factory(std::string_view q);
// What a free function returns, when trainlint knows (torch::randn -> Tensor,
// torch::data::make_data_loader -> DataLoader).
Type free_result(std::string_view q);
// What a method returns on a receiver of the given type (Tensor::to -> Tensor, Tensor::item ->
// Other).
Type method_result(const Type& receiver, std::string_view method);
// A LibTorch module whose forward returns one tensor (Linear, Conv2d, Sequential...).
bool library_module_returns_tensor(std::string_view q);
// torch::nn::Conv1d/2d/3d, ConvTranspose1d/2d/3d (and their Impl and Options types).
bool is_convolution(std::string_view q);

}  // namespace tl::cpp::torch_names
