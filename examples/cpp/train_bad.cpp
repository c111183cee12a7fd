// A small MNIST classifier in LibTorch, trained the slow way.
//
// The C++ counterpart of examples/train_bad.py: the habits that leave a GPU idle, in a LibTorch
// program shaped like the MNIST example that ships with PyTorch. Each `// expect: TLxxx` comment
// names the finding trainlint reports on the line after it; train_good.cpp is the same training
// done right.
//
// It reads the MNIST files from ./data/MNIST/raw when they are there and otherwise trains on
// synthetic digits, so it builds and runs anywhere (on the CPU when CUDA is unavailable):
//
//     cmake -S examples/cpp -B build-examples && cmake --build build-examples
//     build-examples/train_bad 3        # 3 training steps per epoch
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

namespace {

const char* const kDataRoot = "./data/MNIST/raw";
constexpr int64_t kTrainSize = 2048;  // synthetic digits, when MNIST is absent
constexpr int64_t kTestSize = 512;
constexpr int64_t kTrainBatchSize = 64;
constexpr int64_t kTestBatchSize = 256;
constexpr size_t kNumberOfEpochs = 2;
constexpr size_t kLogInterval = 10;

bool mnist_present(const std::string& root) {
  return std::ifstream(root + "/train-images-idx3-ubyte").good() && std::ifstream(root + "/t10k-images-idx3-ubyte").good();
}

// MNIST when its files are present; otherwise 28x28 synthetic digits, a bright horizontal bar
// whose row encodes the label, over noise. At most `limit` samples are kept (0: all). Each sample
// is shifted by up to two pixels and normalised when it is read.
class Digits : public torch::data::datasets::Dataset<Digits> {
 public:
  Digits(const std::string& root, bool train, int64_t synthetic_size, int64_t limit) {
    if (mnist_present(root)) {
      auto mnist = torch::data::datasets::MNIST(
          root, train ? torch::data::datasets::MNIST::Mode::kTrain : torch::data::datasets::MNIST::Mode::kTest);
      images_ = mnist.images();
      targets_ = mnist.targets();
    } else {
      targets_ = torch::randint(0, 10, {synthetic_size}, torch::kLong);
      auto rows = torch::arange(28).view({1, 28, 1});
      auto top = (targets_ * 2 + 4).view({-1, 1, 1});
      auto bar = (rows >= top).logical_and(rows < top + 2).to(torch::kFloat);
      images_ = (0.3 * torch::rand({synthetic_size, 1, 28, 28}) + 0.7 * bar.unsqueeze(1)).clamp(0, 1);
    }
    if (limit > 0 && limit < images_.size(0)) {
      images_ = images_.narrow(0, 0, limit);
      targets_ = targets_.narrow(0, 0, limit);
    }
  }

  torch::data::Example<> get(size_t index) override {
    int64_t dx = static_cast<int64_t>(index % 5) - 2, dy = static_cast<int64_t>(index / 5 % 5) - 2;
    torch::Tensor image = torch::roll(images_[index], {dy, dx}, {1, 2});
    return {(image - 0.1307) / 0.3081, targets_[index]};
  }

  torch::optional<size_t> size() const override { return static_cast<size_t>(images_.size(0)); }

 private:
  torch::Tensor images_, targets_;
};

struct NetImpl : torch::nn::Module {
  NetImpl()
      : conv1(torch::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(10, 20, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(torch::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/0.5, /*train=*/is_training());
    x = fc2->forward(x);
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Dropout2d conv2_drop;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};
TORCH_MODULE(Net);

template <typename DataLoader>
void test(Net& model, torch::Device device, DataLoader& data_loader, size_t dataset_size) {
  model->eval();
  double test_loss = 0;
  int64_t correct = 0;
  for (const auto& batch : data_loader) {
    torch::Tensor data = batch.data.to(device);
    torch::Tensor targets = batch.target.to(device);
    // expect: TL304
    auto output = model->forward(data);
    // expect: TL105
    test_loss += torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum).item<double>();
    auto pred = output.argmax(1);
    // expect: TL105
    correct += pred.eq(targets).sum().item<int64_t>();
  }
  test_loss /= static_cast<double>(dataset_size);
  std::printf("\nTest set: Average loss: %.4f | Accuracy: %.3f\n", test_loss,
              static_cast<double>(correct) / static_cast<double>(dataset_size));
}

}  // namespace

int main(int argc, char** argv) {
  // The first argument, when given, is the number of training steps per epoch (the data are cut
  // to that many batches, and the test data to as many samples as one training batch).
  const int64_t steps = argc > 1 ? std::strtoll(argv[1], nullptr, 10) : 0;
  torch::manual_seed(1);

  torch::DeviceType device_type = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  torch::Device device(device_type);
  std::cout << "Training on " << (device_type == torch::kCUDA ? "GPU" : "CPU") << "." << std::endl;

  Net model;
  model->to(device);

  auto train_dataset = Digits(kDataRoot, /*train=*/true, kTrainSize, steps * kTrainBatchSize).map(torch::data::transforms::Stack<>());
  const size_t train_dataset_size = train_dataset.size().value();
  // expect: TL201
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(
      std::move(train_dataset), torch::data::DataLoaderOptions().batch_size(kTrainBatchSize));

  auto test_dataset = Digits(kDataRoot, /*train=*/false, kTestSize, steps * kTrainBatchSize).map(torch::data::transforms::Stack<>());
  const size_t test_dataset_size = test_dataset.size().value();
  // expect: TL201
  auto test_loader = torch::data::make_data_loader(std::move(test_dataset), kTestBatchSize);

  for (size_t epoch = 1; epoch <= kNumberOfEpochs; ++epoch) {
    model->train();
    size_t batch_idx = 0;
    float running_loss = 0;
    for (auto& batch : *train_loader) {
      // expect: TL107
      torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.5));
      torch::Tensor data = batch.data;
      torch::Tensor targets = batch.target.to(device);
      // expect: TL401
      data.to(device);
      // expect: TL305
      torch::Tensor class_weights = torch::ones({10}).to(device);

      optimizer.zero_grad();
      auto output = model->forward(data);
      auto loss = torch::nll_loss(output, targets, class_weights);
      // expect: TL501
      loss.backward();
      optimizer.step();

      // expect: TL105
      running_loss += loss.item<float>();
      // expect: TL105
      std::cout << "step " << batch_idx << " loss " << loss << std::endl;
      if (batch_idx++ % kLogInterval == 0) {
        // ok: TL105
        std::printf("\rTrain Epoch: %zu [%5zu/%5zu] Loss: %.4f", epoch, batch_idx * batch.data.size(0),
                    train_dataset_size, running_loss / static_cast<float>(batch_idx));
      }
      // expect: TL103
      torch::save(model, "mnist-checkpoint.pt");
    }
    test(model, device, *test_loader, test_dataset_size);
  }
  return 0;
}
