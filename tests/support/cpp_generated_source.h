// A generated LibTorch source of a requested size, for the fast path's scaling test and benchmark:
// `blocks` copies of a module, a training function (a data loop with a per-step `.item<float>()`
// and a helper it calls), an evaluation function and a periodic checkpoint, then a `main` that
// runs them all and one long function with thousands of locals, most of the same few names (the
// shape that makes a linear variable lookup quadratic).
#pragma once
#include <cstddef>
#include <string>

namespace tl::test {

struct GeneratedCpp {
  std::string text;
  size_t blocks = 0;  // each block has one per-step `.item<float>()` on CUDA (TL105)
};

inline GeneratedCpp generated_libtorch_source(size_t target_bytes) {
  GeneratedCpp g;
  std::string& out = g.text;
  out.reserve(target_bytes + 200000);
  out += "#include <torch/torch.h>\n#include <iostream>\n\n";
  std::string main_body;
  for (size_t k = 0; out.size() + main_body.size() < target_bytes * 9 / 10; ++k, ++g.blocks) {
    std::string n = std::to_string(k);
    out += "struct Net" + n + "Impl : torch::nn::Module {\n"
           "  Net" + n + "Impl() : fc1(64, 32), fc2(32, 10) {\n"
           "    register_module(\"fc1\", fc1);\n    register_module(\"fc2\", fc2);\n  }\n"
           "  torch::Tensor forward(torch::Tensor x) {\n"
           "    x = torch::relu(fc1->forward(x));\n    return torch::log_softmax(fc2->forward(x), 1);\n  }\n"
           "  torch::nn::Linear fc1{nullptr}, fc2{nullptr};\n};\nTORCH_MODULE(Net" + n + ");\n\n"
           "void log_step" + n + "(const torch::Tensor& loss, size_t step) {\n"
           "  if (step % 100 == 0) std::cout << \"step \" << step << \" loss \" << loss.item<float>() << '\\n';\n}\n\n"
           "template <typename Loader>\n"
           "void train" + n + "(Net" + n + "& model, torch::Device device, Loader& loader, torch::optim::Optimizer& optimizer) {\n"
           "  model->train();\n  size_t step = 0;\n  double total = 0;\n"
           "  for (auto& batch : loader) {\n"
           "    auto data = batch.data.to(device), target = batch.target.to(device);\n"
           "    optimizer.zero_grad();\n    auto output = model->forward(data);\n"
           "    auto loss = torch::nll_loss(output, target);\n    loss.backward();\n    optimizer.step();\n"
           "    total += loss.item<float>();\n"
           "    log_step" + n + "(loss, ++step);\n"
           "    if (step % 1000 == 0) torch::save(model, \"net" + n + ".pt\");\n  }\n}\n\n"
           "template <typename Loader>\n"
           "double test" + n + "(Net" + n + "& model, torch::Device device, Loader& loader) {\n"
           "  torch::NoGradGuard no_grad;\n  model->eval();\n  torch::Tensor correct = torch::zeros({1}, device);\n"
           "  for (const auto& batch : loader) {\n"
           "    auto output = model->forward(batch.data.to(device));\n"
           "    correct += output.argmax(1).eq(batch.target.to(device)).sum();\n  }\n"
           "  return correct.item<double>();\n}\n\n";
    main_body += "  {\n    Net" + n + " model;\n    model->to(device);\n"
                 "    auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST(\"./data\")"
                 ".map(torch::data::transforms::Stack<>()), torch::data::DataLoaderOptions().batch_size(64).workers(2));\n"
                 "    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));\n"
                 "    for (int epoch = 0; epoch < 3; ++epoch) {\n"
                 "      train" + n + "(model, device, *loader, optimizer);\n"
                 "      std::cout << test" + n + "(model, device, *loader) << '\\n';\n    }\n  }\n";
  }
  out += "int main() {\n  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);\n";
  out += main_body;
  out += "  return 0;\n}\n\n";
  // one long function: blocks of locals with the same names
  out += "torch::Tensor features(const torch::Tensor& input) {\n  torch::Tensor acc = input.clone();\n";
  for (size_t i = 0; out.size() < target_bytes; ++i) {
    std::string s = std::to_string(i);
    out += "  {\n    auto x = acc * " + s + ";\n    auto y = torch::relu(x) + acc;\n"
           "    auto z = y.sum(1, true);\n    acc = acc + z / (y.norm() + 1);\n  }\n";
  }
  out += "  return acc;\n}\n";
  return g;
}

}  // namespace tl::test
