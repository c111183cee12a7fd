// Per-file time of the C++ fast path (tree-sitter-cpp parse + C++ model + the ten C++ rules) on a
// generated ~500-line LibTorch training file, against a bare tree-sitter parse of the same text,
// side by side in one process (Google Benchmark, real time). bench/README.md has the method and
// the figures.
#include <benchmark/benchmark.h>
#include <tree_sitter/api.h>

#include <algorithm>
#include <memory>
#include <string>

#include "analyzer/cpp/model.h"
#include "rules/cpp/rules.h"
#include "rules/registry.h"
#include "support/cpp_generated_source.h"

extern "C" const TSLanguage* tree_sitter_cpp(void);

namespace {

// Eight small modules with a training and an evaluation function each, and a main that runs
// them: the shape of a LibTorch example program, about 500 lines.
const std::string& source() {
  static const std::string s = [] {
    std::string out = "#include <torch/torch.h>\n#include <iostream>\n\n";
    for (int k = 0; k < 8; ++k) {
      std::string n = std::to_string(k);
      out += "struct Net" + n + "Impl : torch::nn::Module {\n"
             "  Net" + n + "Impl()\n"
             "      : conv1(torch::nn::Conv2dOptions(1, 10, 5)), conv2(torch::nn::Conv2dOptions(10, 20, 5)),\n"
             "        fc1(320, 50), fc2(50, 10) {\n"
             "    register_module(\"conv1\", conv1);\n    register_module(\"conv2\", conv2);\n"
             "    register_module(\"fc1\", fc1);\n    register_module(\"fc2\", fc2);\n  }\n"
             "  torch::Tensor forward(torch::Tensor x) {\n"
             "    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));\n"
             "    x = torch::relu(torch::max_pool2d(conv2->forward(x), 2));\n"
             "    x = x.view({-1, 320});\n    x = torch::relu(fc1->forward(x));\n"
             "    x = torch::dropout(x, 0.5, is_training());\n"
             "    return torch::log_softmax(fc2->forward(x), 1);\n  }\n"
             "  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};\n  torch::nn::Linear fc1{nullptr}, fc2{nullptr};\n};\n"
             "TORCH_MODULE(Net" + n + ");\n\n"
             "template <typename DataLoader>\n"
             "void train" + n + "(size_t epoch, Net" + n + "& model, torch::Device device, DataLoader& loader,\n"
             "            torch::optim::Optimizer& optimizer, size_t dataset_size) {\n"
             "  model->train();\n  size_t batch_idx = 0;\n"
             "  for (auto& batch : loader) {\n"
             "    auto data = batch.data.to(device), targets = batch.target.to(device);\n"
             "    optimizer.zero_grad();\n    auto output = model->forward(data);\n"
             "    auto loss = torch::nll_loss(output, targets);\n"
             "    AT_ASSERT(!std::isnan(loss.template item<float>()));\n"
             "    loss.backward();\n    optimizer.step();\n"
             "    if (batch_idx++ % 10 == 0) {\n"
             "      std::printf(\"Train Epoch: %ld [%5ld/%5ld] Loss: %.4f\\n\", epoch, batch_idx * batch.data.size(0),\n"
             "                  dataset_size, loss.template item<float>());\n    }\n  }\n}\n\n"
             "template <typename DataLoader>\n"
             "void test" + n + "(Net" + n + "& model, torch::Device device, DataLoader& loader, size_t dataset_size) {\n"
             "  torch::NoGradGuard no_grad;\n  model->eval();\n  double test_loss = 0;\n  int32_t correct = 0;\n"
             "  for (const auto& batch : loader) {\n"
             "    auto data = batch.data.to(device), targets = batch.target.to(device);\n"
             "    auto output = model->forward(data);\n"
             "    test_loss += torch::nll_loss(output, targets, {}, at::Reduction::Sum).template item<float>();\n"
             "    auto pred = output.argmax(1);\n"
             "    correct += pred.eq(targets).sum().template item<int64_t>();\n  }\n"
             "  test_loss /= dataset_size;\n"
             "  std::printf(\"Test set: Average loss: %.4f | Accuracy: %.3f\\n\", test_loss,\n"
             "              static_cast<double>(correct) / dataset_size);\n}\n\n";
    }
    out += "int main() {\n  torch::manual_seed(1);\n"
           "  torch::Device device(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);\n";
    for (int k = 0; k < 8; ++k) {
      std::string n = std::to_string(k);
      out += "  {\n    Net" + n + " model;\n    model->to(device);\n"
             "    auto train_dataset = torch::data::datasets::MNIST(\"./data\")\n"
             "        .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))\n"
             "        .map(torch::data::transforms::Stack<>());\n"
             "    const size_t n = train_dataset.size().value();\n"
             "    auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(\n"
             "        std::move(train_dataset), 64);\n"
             "    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));\n"
             "    for (size_t epoch = 1; epoch <= 10; ++epoch) {\n"
             "      train" + n + "(epoch, model, device, *loader, optimizer, n);\n"
             "      test" + n + "(model, device, *loader, n);\n    }\n  }\n";
    }
    out += "}\n";
    return out;
  }();
  return s;
}

void BM_CppBareParse(benchmark::State& state) {
  const std::string& text = source();
  for (auto _ : state) {
    TSParser* p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_cpp());
    TSTree* t = ts_parser_parse_string(p, nullptr, text.data(), static_cast<uint32_t>(text.size()));
    benchmark::DoNotOptimize(t);
    ts_tree_delete(t);
    ts_parser_delete(p);
  }
  state.counters["lines"] = static_cast<double>(std::count(text.begin(), text.end(), '\n'));
}

void run_fast_path(benchmark::State& state, const std::string& text) {
  tl::SourceFile src("train.cpp", text);
  const tl::cpp::CheckFn checks[] = {
      tl::cpp::check_empty_cache_per_step, tl::cpp::check_checkpoint_per_step, tl::cpp::check_host_sync_per_step,
      tl::cpp::check_setup_in_step, tl::cpp::check_dataloader_no_workers, tl::cpp::check_data_parallel,
      tl::cpp::check_eval_without_no_grad, tl::cpp::check_tensor_created_then_moved,
      tl::cpp::check_tensor_to_discarded, tl::cpp::check_cudnn_benchmark_off};
  const tl::RuleInfo* info = tl::find_rule("TL103");
  size_t findings = 0;
  for (auto _ : state) {
    tl::cpp::Model m = tl::cpp::Model::build({&src});
    std::vector<tl::Finding> out;
    for (auto check : checks) {
      tl::cpp::RuleContext ctx(m, m.translation_units()[0], *info, out);
      check(ctx);
    }
    findings = out.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["findings"] = static_cast<double>(findings);
}

void BM_CppFastPath(benchmark::State& state) { run_fast_path(state, source()); }

// A generated 5 MB file (tests/support/cpp_generated_source.h): the model scales with the source.
void BM_CppFastPath5MB(benchmark::State& state) {
  static const std::string text = tl::test::generated_libtorch_source(5u << 20).text;
  run_fast_path(state, text);
  state.counters["MB"] = static_cast<double>(text.size()) / (1 << 20);
}

}  // namespace

BENCHMARK(BM_CppBareParse)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CppFastPath)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CppFastPath5MB)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_MAIN();
