// The C++ program model of the fast path (tree-sitter-cpp): types from declarations, module
// holders, loops classified, guards, calls across files, programs and device facts.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "analyzer/cpp/model.h"
#include "support/cpp_model_support.h"
#include "tests/support/test_support.h"

using namespace tl;
using namespace tl::cpp;
using tl::test::build_cpp;

namespace {

// An MNIST-style LibTorch program, the shape of pytorch/examples cpp/mnist.
const char* kMnist = R"(#include <torch/torch.h>
#include <iostream>

struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv1(torch::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    return torch::log_softmax(fc2->forward(x), /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};
TORCH_MODULE(Net);

template <typename DataLoader>
void train(size_t epoch, Net& model, torch::Device device, DataLoader& data_loader,
           torch::optim::Optimizer& optimizer) {
  model->train();
  size_t batch_idx = 0;
  for (auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto output = model->forward(data);
    auto loss = torch::nll_loss(output, targets);
    loss.backward();
    optimizer.step();
    if (batch_idx++ % 10 == 0) {
      std::printf("\rTrain Epoch: %ld [%5ld] Loss: %.4f", epoch, batch_idx, loss.template item<float>());
    }
  }
}

template <typename DataLoader>
void test(Net& model, torch::Device device, DataLoader& data_loader, size_t dataset_size) {
  torch::NoGradGuard no_grad;
  model->eval();
  double test_loss = 0;
  for (const auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model->forward(data);
    test_loss += torch::nll_loss(output, targets).template item<float>();
  }
}

int main() {
  torch::manual_seed(1);
  torch::DeviceType device_type;
  if (torch::cuda::is_available()) {
    device_type = torch::kCUDA;
  } else {
    device_type = torch::kCPU;
  }
  torch::Device device(device_type);
  Net model;
  model->to(device);
  auto train_dataset = torch::data::datasets::MNIST("./data")
                           .map(torch::data::transforms::Stack<>());
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(train_dataset), 64);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
  for (size_t epoch = 1; epoch <= 10; ++epoch) {
    train(epoch, model, device, *train_loader, optimizer);
    test(model, device, *train_loader, 60000);
    if (epoch % 5 == 0) torch::save(model, "model.pt");
  }
}
)";

TEST(CppModel, ParsesWithoutSyntaxErrors) {
  auto b = build_cpp({{"mnist.cpp", kMnist}});
  EXPECT_TRUE(b->model.translation_units()[0].syntax_errors.empty());
}

TEST(CppModel, ModuleClassAndTorchModuleHolder) {
  auto b = build_cpp({{"mnist.cpp", kMnist}});
  ASSERT_EQ(b->model.classes().size(), 1u);
  const Class& c = b->model.classes()[0];
  EXPECT_EQ(c.name, "NetImpl");
  EXPECT_TRUE(c.is_module);
  EXPECT_EQ(c.holder, "Net");
  EXPECT_EQ(b->var("mnist.cpp", "conv1").type.kind, TypeKind::ModuleHolder);
  EXPECT_EQ(b->var("mnist.cpp", "conv1").type.name, "torch::nn::Conv2d");
  const Variable& model = b->var("mnist.cpp", "model", 1);  // main's `Net model;`
  EXPECT_EQ(model.type.kind, TypeKind::ModuleHolder);
  EXPECT_EQ(model.type.name, "NetImpl");
  EXPECT_GE(b->model.find_function("NetImpl::forward"), 0);
}

TEST(CppModel, TypesFromDeclarationsAndReturnTypes) {
  auto b = build_cpp({{"mnist.cpp", kMnist}});
  EXPECT_EQ(b->var("mnist.cpp", "data").type.kind, TypeKind::Tensor);     // batch.data.to(device)
  EXPECT_EQ(b->var("mnist.cpp", "output").type.kind, TypeKind::Tensor);   // model->forward(data)
  EXPECT_EQ(b->var("mnist.cpp", "loss").type.kind, TypeKind::Tensor);     // torch::nll_loss(...)
  EXPECT_EQ(b->var("mnist.cpp", "batch").type.kind, TypeKind::Batch);
  EXPECT_EQ(b->var("mnist.cpp", "optimizer", 1).type.kind, TypeKind::Optimizer);
  EXPECT_EQ(b->var("mnist.cpp", "train_loader").type.kind, TypeKind::DataLoader);
  EXPECT_EQ(b->var("mnist.cpp", "no_grad").type.kind, TypeKind::GradGuard);
  EXPECT_EQ(b->var("mnist.cpp", "device", 2).type.kind, TypeKind::Device);
  EXPECT_EQ(b->var("mnist.cpp", "test_loss").type.kind, TypeKind::Unknown);  // a double: nothing certain
  // receiver types on calls
  EXPECT_EQ(b->call("mnist.cpp", "model->to(device)").receiver_type.kind, TypeKind::ModuleHolder);
  EXPECT_EQ(b->call("mnist.cpp", "loss.backward()").receiver_type.kind, TypeKind::Tensor);
  EXPECT_EQ(b->call("mnist.cpp", "optimizer.step()").receiver_type.kind, TypeKind::Optimizer);
  EXPECT_EQ(b->call("mnist.cpp", "torch::save").callee, "torch::save");
  // `x.template item<T>()` in a template: the method and its template argument
  const CallSite& item = b->call("mnist.cpp", "loss.template item");
  EXPECT_EQ(item.method, "item");
  EXPECT_EQ(item.template_args, "float");
  EXPECT_EQ(item.receiver_type.kind, TypeKind::Tensor);
}

TEST(CppModel, LoopsClassifiedAcrossFunctions) {
  auto b = build_cpp({{"mnist.cpp", kMnist}});
  const Loop& train = b->loop_at_line("mnist.cpp", 32);
  EXPECT_TRUE(train.data_loop);
  EXPECT_EQ(train.kind, LoopKind::TrainingStep);
  EXPECT_EQ(b->loop_at_line("mnist.cpp", 50).kind, LoopKind::EvaluationStep);
  // main's loop calls train() and test(): an epoch loop
  EXPECT_EQ(b->loop_at_line("mnist.cpp", 73).kind, LoopKind::Epoch);
}

TEST(CppModel, GuardsVaryingOrNot) {
  auto b = build_cpp({{"mnist.cpp", kMnist}});
  EXPECT_TRUE(b->per_step("mnist.cpp", "optimizer.step()"));
  EXPECT_FALSE(b->per_step("mnist.cpp", "std::printf"));       // under batch_idx++ % 10
  EXPECT_FALSE(b->per_step("mnist.cpp", "torch::save"));       // in the epoch loop
  EXPECT_TRUE(b->per_step("mnist.cpp", "torch::nll_loss(output, targets).template"));  // evaluation step
}

TEST(CppModel, HolderCallsReachForward) {
  auto b = build_cpp({{"mnist.cpp", kMnist}});
  const CallSite& fwd = b->call("mnist.cpp", "model->forward(data)");
  ASSERT_GE(fwd.target, 0);
  EXPECT_EQ(b->model.functions()[fwd.target].qualified_name, "NetImpl::forward");
  // work inside forward runs every step, through the holder call
  auto sc = b->model.runs_every_step(b->call("mnist.cpp", "x.view"));
  ASSERT_TRUE(sc.has_value());
  ASSERT_EQ(sc->chain.size(), 1u);
  EXPECT_EQ(b->text(b->model.calls()[sc->chain[0]]), "model->forward(data)");
}

TEST(CppModel, DeviceFactsAndPrograms) {
  auto b = build_cpp({{"mnist.cpp", kMnist}});
  EXPECT_TRUE(b->var("mnist.cpp", "device_type").may_cuda);  // assigned torch::kCUDA under is_available()
  EXPECT_TRUE(b->call("mnist.cpp", "model->to(device)").places_on_cuda);
  ASSERT_EQ(b->model.programs().size(), 1u);
  EXPECT_TRUE(b->model.programs()[0].on_cuda);
  EXPECT_TRUE(b->model.on_cuda(0));
}

TEST(CppModel, CpuOnlyProgramIsNotOnCuda) {
  auto b = build_cpp({{"cpu.cpp", R"(#include <torch/torch.h>
int main() {
  torch::Device device(torch::kCPU);
  auto net = torch::nn::Linear(4, 1);
  net->to(device);
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3));
  for (int it = 0; it < 100; ++it) {
    auto x = torch::randn({8, 4});
    auto loss = net(x).pow(2).mean();
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
}
)"}});
  EXPECT_FALSE(b->model.programs()[0].on_cuda);
  EXPECT_EQ(b->loop_at_line("cpu.cpp", 7).kind, LoopKind::TrainingStep);  // rule 2: innermost loop stepping
  EXPECT_EQ(b->var("cpu.cpp", "net").type.kind, TypeKind::ModuleHolder);
  EXPECT_EQ(b->var("cpu.cpp", "loss").type.kind, TypeKind::Tensor);  // net(x) -> Linear's forward -> Tensor
}

TEST(CppModel, CallsAcrossFilesMakeOneProgram) {
  auto b = build_cpp({{"src/trainer.h", R"(#pragma once
#include <torch/torch.h>
void save_every_step(torch::nn::Linear& net, int step);
float train_step(torch::nn::Linear& net, torch::optim::SGD& opt, torch::Tensor x);
)"},
                      {"src/trainer.cpp", R"(#include "trainer.h"
void save_every_step(torch::nn::Linear& net, int step) {
  torch::save(net, "last.pt");
}
float train_step(torch::nn::Linear& net, torch::optim::SGD& opt, torch::Tensor x) {
  opt.zero_grad();
  auto loss = net->forward(x).sum();
  loss.backward();
  opt.step();
  return loss.item<float>();
}
)"},
                      {"src/main.cpp", R"(#include "trainer.h"
int main() {
  torch::nn::Linear net(8, 1);
  torch::optim::SGD opt(net->parameters(), 0.1);
  for (int step = 0; step < 1000; ++step) {
    auto x = torch::randn({32, 8});
    train_step(net, opt, x);
    save_every_step(net, step);
  }
  return 0;
}
)"}});
  ASSERT_EQ(b->model.programs().size(), 1u);
  const Program& p = b->model.programs()[0];
  EXPECT_EQ(p.entry, b->tu("src/main.cpp"));
  EXPECT_EQ(p.members.size(), 2u);  // main.cpp and trainer.cpp (the header declares only)
  EXPECT_EQ(b->loop_at_line("src/main.cpp", 5).kind, LoopKind::TrainingStep);
  auto sc = b->model.runs_every_step(b->call("src/trainer.cpp", "torch::save"));
  ASSERT_TRUE(sc.has_value());
  EXPECT_EQ(b->model.loops()[sc->loop].tu, b->tu("src/main.cpp"));
  // the guard in the callee reads its parameter: varying, so not every step
  auto b2 = build_cpp({{"a.cpp", R"(#include <torch/torch.h>
void maybe_save(torch::nn::Linear& net, int step) {
  if (step % 100 == 0) torch::save(net, "ckpt.pt");
}
int main() {
  torch::nn::Linear net(8, 1);
  torch::optim::SGD opt(net->parameters(), 0.1);
  for (int step = 0; step < 1000; ++step) {
    auto loss = net->forward(torch::randn({4, 8})).sum();
    loss.backward();
    opt.step();
    maybe_save(net, step);
  }
}
)"}});
  EXPECT_FALSE(b2->per_step("a.cpp", "torch::save"));
}

TEST(CppModel, UsingNamespaceAndNamespaceAliases) {
  auto b = build_cpp({{"u.cpp", R"(#include <torch/torch.h>
using namespace torch;
namespace F = torch::nn::functional;
namespace optim = torch::optim;
int main() {
  Tensor w = randn({3, 3});
  optim::Adam opt({w}, optim::AdamOptions(0.1));
  auto y = F::relu(w);
  for (int i = 0; i < 10; ++i) {
    auto loss = (w * 2).sum();
    loss.backward();
    opt.step();
    save(w, "w.pt");
  }
}
)"}});
  EXPECT_EQ(b->var("u.cpp", "w").type.kind, TypeKind::Tensor);
  EXPECT_EQ(b->var("u.cpp", "opt").type.kind, TypeKind::Optimizer);
  EXPECT_EQ(b->var("u.cpp", "y").type.kind, TypeKind::Tensor);
  EXPECT_EQ(b->call("u.cpp", "save(").callee, "torch::save");
  EXPECT_TRUE(b->per_step("u.cpp", "save("));
}

TEST(CppModel, WhileLoaderLoopAndNestedAccumulationLoop) {
  auto b = build_cpp({{"w.cpp", R"(#include <torch/torch.h>
void run(torch::nn::Linear& net, torch::optim::SGD& optimizer, std::vector<torch::Tensor>& batches) {
  auto it = batches.begin();
  while (it != batches.end()) {
    for (int micro = 0; micro < 4; ++micro) {
      auto loss = net->forward(*it).sum() / 4;
      loss.backward();
      torch::cuda::synchronize();
    }
    optimizer.step();
    ++it;
  }
}
)"}});
  EXPECT_EQ(b->loop_at_line("w.cpp", 4).kind, LoopKind::TrainingStep);
  EXPECT_EQ(b->loop_at_line("w.cpp", 5).kind, LoopKind::Other);  // nested: part of the step
  auto sc = b->model.runs_every_step(b->call("w.cpp", "torch::cuda::synchronize"));
  ASSERT_TRUE(sc.has_value());
  EXPECT_EQ(b->model.loops()[sc->loop].range.start.line, 4u);
}

TEST(CppModel, BlockScopeUsingsLastUntilTheirBlockEnds) {
  auto b = build_cpp({{"b.cpp", R"(#include <torch/torch.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/nn/parallel/data_parallel.h>
torch::Tensor data_parallel(torch::Tensor x) { return x; }
int main() {
  torch::Tensor x = torch::randn({4, 4});
  {
    using namespace c10::cuda;
    using torch::nn::parallel::data_parallel;
    namespace par = torch::nn::parallel;
    CUDACachingAllocator::emptyCache();
    auto a = data_parallel(x);
    auto c = par::data_parallel(x);
  }
  CUDACachingAllocator::emptyCache();
  auto d = data_parallel(x);
  return 0;
}
)"}});
  EXPECT_EQ(b->call("b.cpp", "CUDACachingAllocator::emptyCache", 0).callee, "c10::cuda::CUDACachingAllocator::emptyCache");
  EXPECT_EQ(b->call("b.cpp", "data_parallel(x)", 0).callee, "torch::nn::parallel::data_parallel");
  EXPECT_EQ(b->call("b.cpp", "par::data_parallel(x)").callee, "torch::nn::parallel::data_parallel");
  // after the block: neither the directive nor the declaration is in force
  EXPECT_EQ(b->call("b.cpp", "CUDACachingAllocator::emptyCache", 1).callee, "CUDACachingAllocator::emptyCache");
  const CallSite& d = b->call("b.cpp", "data_parallel(x)", 1);
  EXPECT_EQ(d.callee, "data_parallel");
  ASSERT_GE(d.target, 0);
  EXPECT_EQ(b->model.functions()[d.target].qualified_name, "data_parallel");
}

TEST(CppModel, NamespaceScopeUsingDeclaration) {
  auto b = build_cpp({{"n.cpp", R"(#include <torch/torch.h>
using torch::Tensor;
using torch::optim::Adam;
Tensor step(Tensor w) { return w * 2; }
int main() {
  Tensor w = torch::randn({3});
  Adam opt({w}, torch::optim::AdamOptions(0.1));
  return 0;
}
)"}});
  EXPECT_EQ(b->model.translation_units()[0].using_declarations.at("Adam"), "torch::optim::Adam");
  EXPECT_EQ(b->var("n.cpp", "w").type.kind, TypeKind::Tensor);
  EXPECT_EQ(b->var("n.cpp", "opt").type.kind, TypeKind::Optimizer);
}

TEST(CppModel, ParametersVaryOnlyWhenBoundToWhatChangesInTheLoop) {
  auto b = build_cpp({{"p.cpp", R"(#include <torch/torch.h>
struct Options { bool low_memory = false; int64_t every = 100; };
void release() { torch::save(torch::zeros({1}), "x.pt"); }
void after_step(const Options& opts, int64_t step) {
  if (opts.low_memory) release();
  if (step > opts.every) torch::save(torch::ones({1}), "late.pt");
}
void relay(const Options& o, int64_t s) { after_step(o, s); }
int main() {
  Options opts;
  torch::nn::Linear net(4, 1);
  torch::optim::SGD optimizer(net->parameters(), 0.1);
  int64_t step = 0;
  for (int i = 0; i < 1000; ++i) {
    auto loss = net->forward(torch::randn({8, 4})).sum();
    loss.backward();
    optimizer.step();
    relay(opts, step);
    ++step;
  }
}
)"}});
  // `opts` is configuration: the guard in after_step does not vary, release() runs every step
  EXPECT_TRUE(b->per_step("p.cpp", "torch::save(torch::zeros"));
  // `step` changes in the loop, through relay()'s parameter into after_step()'s
  EXPECT_FALSE(b->per_step("p.cpp", "torch::save(torch::ones"));
}

TEST(CppModel, AnyOperatorShiftOfATensorIsAStreamWrite) {
  auto b = build_cpp({{"s.cpp", R"(#include <torch/torch.h>
#include <sstream>
#include <glog/logging.h>
void report(std::ostream& os, const torch::Tensor& t) { os << "t=" << t; }
int main() {
  torch::Tensor loss = torch::randn({1});
  std::ostringstream line;
  line << "loss: " << loss;
  LOG(INFO) << "loss " << loss;
  int64_t flags = 1 << 4;
  std::ostringstream quiet;
  quiet << "flags " << flags;
  report(line, loss);
}
)"}});
  std::vector<std::string> streams;
  for (auto& w : b->model.stream_writes()) {
    bool tensor = false;
    for (auto& ty : w.operand_types) tensor = tensor || ty.kind == TypeKind::Tensor;
    streams.push_back(w.stream + (tensor ? ":tensor" : ""));
  }
  EXPECT_EQ(streams, (std::vector<std::string>{"os:tensor", "line:tensor", "LOG(INFO):tensor", "quiet"}));
}

TEST(CppModel, DeepAndBrokenSourcesGiveAModel) {
  // an expression 20000 levels deep and a file cut in the middle of a function
  std::string deep = "#include <torch/torch.h>\nint main() {\n  auto x = torch::zeros({1});\n  auto y = ";
  for (int i = 0; i < 20000; ++i) deep += "x + ";
  deep += "x;\n  for (int i = 0; i < 3; ++i) { y.backward(); }\n}\n";
  std::string broken = std::string(kMnist).substr(0, std::string(kMnist).size() / 2) + "\n}}} ) ;; for (auto& b : *loader {\n";
  auto b = build_cpp({{"deep.cpp", deep}, {"broken.cpp", broken}});
  EXPECT_FALSE(b->model.translation_units()[b->tu("broken.cpp")].syntax_errors.empty());
  EXPECT_EQ(b->var("broken.cpp", "x").type.kind, TypeKind::Tensor);  // NetImpl::forward's parameter
  const auto& deep_tu = b->model.translation_units()[b->tu("deep.cpp")];
  ASSERT_FALSE(deep_tu.syntax_errors.empty());
  EXPECT_NE(deep_tu.syntax_errors.back().second.find("nested more than"), std::string::npos);
}

}  // namespace

namespace {

// Which receivers of `.item()` are host-resident tensors (docs/concepts.md), by receiver text.
std::map<std::string, bool> item_receivers_on_host(const tl::test::CppBuilt& b) {
  std::map<std::string, bool> out;
  for (auto& c : b.model.calls())
    if (c.method == "item") out[c.receiver] = c.receiver_on_host;
  return out;
}

TEST(CppModel, HostResidentTensors) {
  auto b = build_cpp({{"h.cpp", R"(#include <torch/torch.h>
struct Holder {
  torch::Tensor kept = torch::zeros({3});
};
int64_t first_of(const torch::Tensor& t) { return t[0].item<int64_t>(); }
int64_t any_of(const torch::Tensor& t) { return t.sum().item<int64_t>(); }
torch::Tensor counts(const torch::Tensor& labels) { return labels.ne(0).sum(1); }
void replace(torch::Tensor& t, torch::Device d) { t = t.to(d); }
int main() {
  torch::Device device(torch::kCUDA);
  Holder holder;
  auto loader = torch::data::make_data_loader(torch::data::datasets::MNIST("data"));
  for (auto& batch : *loader) {
    auto images = batch.data.to(device);
    torch::Tensor labels = batch.target;
    torch::Tensor on_gpu = labels.to(device);
    torch::Tensor floats = labels.to(torch::kFloat);
    torch::Tensor back = on_gpu.cpu();
    int64_t size = 4;
    torch::Tensor sizes = torch::zeros({size}, torch::kLong);
    torch::Tensor placed = torch::zeros({size}, torch::TensorOptions().device(device));
    torch::Tensor blob = torch::from_blob(&size, {1}, torch::kLong);
    torch::Tensor like = torch::from_blob(&size, {1}, on_gpu.options());
    torch::Tensor swapped = torch::zeros({1});
    replace(swapped, device);
    torch::Tensor exchanged = torch::zeros({1});
    std::swap(exchanged, on_gpu);
    torch::Tensor sorted = std::get<0>(counts(batch.target.view({-1, 1})).sort(0));
    labels[0].item<int64_t>();
    (labels > 3).sum().item<int64_t>();
    on_gpu.item<int64_t>();
    floats.mean().item<float>();
    back.item<int64_t>();
    sizes.item<int64_t>();
    placed.item<int64_t>();
    blob.item<int64_t>();
    like.item<int64_t>();
    swapped.item<int64_t>();
    exchanged.item<int64_t>();
    sorted.item<int64_t>();
    holder.kept.item<int64_t>();
    (images > labels.to(device)).sum().item<int64_t>();
    first_of(labels);
    any_of(labels);
    any_of(on_gpu);
  }
}
)"}});
  auto on_host = item_receivers_on_host(*b);
  EXPECT_EQ(on_host, (std::map<std::string, bool>{
                         {"labels[0]", true},
                         {"(labels > 3).sum()", true},
                         {"on_gpu", false},
                         {"floats.mean()", true},
                         {"back", true},
                         {"sizes", true},
                         {"placed", false},
                         {"blob", true},
                         {"like", false},
                         {"swapped", false},
                         {"exchanged", false},
                         {"sorted", true},
                         {"holder.kept", false},
                         {"(images > labels.to(device)).sum()", false},
                         {"t[0]", true},   // first_of: every call passes host labels
                         {"t.sum()", false},  // any_of: one call passes on_gpu
                     }));
}

TEST(CppModel, ADatasetThatPlacesOnCudaMakesNoBatchHostResident) {
  auto b = build_cpp({{"d.cpp", R"(#include <torch/torch.h>
class OnGpu : public torch::data::datasets::Dataset<OnGpu> {
 public:
  explicit OnGpu(torch::Device d) : data_(torch::randn({64, 4}).to(d)), labels_(torch::randint(0, 2, {64}).to(d)) {}
  torch::data::Example<> get(size_t i) override { return {data_[i], labels_[i].to(device_)}; }
  torch::optional<size_t> size() const override { return 64; }
 private:
  torch::Tensor data_, labels_;
  torch::Device device_ = torch::kCUDA;
};
int main() {
  torch::Device device(torch::kCUDA);
  auto loader = torch::data::make_data_loader(OnGpu(device).map(torch::data::transforms::Stack<>()));
  for (auto& batch : *loader) {
    batch.target.sum().item<int64_t>();
  }
}
)"}});
  EXPECT_EQ(item_receivers_on_host(*b), (std::map<std::string, bool>{{"batch.target.sum()", false}}));
}

// The files are parsed on the run's threads, largest first; the model is the same for any number
// of them: every translation unit, function, call and loop in the same order with the same facts.
TEST(CppModel, ThreadsDoNotChangeTheModel) {
  std::vector<std::unique_ptr<SourceFile>> files;
  std::vector<const SourceFile*> ptrs;
  for (auto& p : test::source_files_under({"tests/fixtures/cpp", "examples/cpp"}, {".cpp", ".h", ".hpp", ".cc"})) {
    files.push_back(std::make_unique<SourceFile>(p.string(), test::read_file(p)));
    ptrs.push_back(files.back().get());
  }
  ASSERT_GT(ptrs.size(), 5u);
  auto summary = [](const Model& m) {
    std::string s;
    for (auto& tu : m.translation_units()) {
      s += "tu " + tu.path + " errors " + std::to_string(tu.syntax_errors.size()) + "\n";
      for (auto& [pos, msg] : tu.syntax_errors) s += "  " + std::to_string(pos.line) + ":" + std::to_string(pos.col) + " " + msg + "\n";
    }
    for (auto& f : m.functions())
      s += "fn " + std::to_string(f.tu) + " " + f.qualified_name + " calls " + std::to_string(f.calls.size()) + " callers " +
           std::to_string(f.callers.size()) + "\n";
    for (auto& c : m.calls()) s += "call " + c.callee + " " + c.method + " " + c.receiver + "\n";
    s += "loops " + std::to_string(m.loops().size()) + " classes " + std::to_string(m.classes().size()) + " variables " +
         std::to_string(m.variables().size()) + "\n";
    return s;
  };
  const std::string one = summary(Model::build(ptrs, nullptr, 1));
  EXPECT_GT(one.size(), 1000u);
  EXPECT_EQ(summary(Model::build(ptrs, nullptr, 3)), one);
  EXPECT_EQ(summary(Model::build(ptrs, nullptr, 8)), one);
}

}  // namespace
