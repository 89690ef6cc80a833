// onert-checkpoint's own host driver for the onert-micro training runtime (a test peer).
//
// Written for this project's interop tests against the public API of onert-micro's
// OMTrainingInterpreter (OMTrainingInterpreter.h, OMConfig.h); it is linked with the library
// built from ../shared/reference/onert-micro (see tests/interop/conftest.py). Models, weights
// and data are files, so one binary serves every test:
//
//   driver --model M.circle --opt sgd|adam [--wof W.wof] [--batch B] [--lr LR]
//          [--beta1 B1] [--beta2 B2] [--eps E] [--train-layers L]
//          [--load CKPT] [--x X.f32 --y Y.f32 --steps K] [--save CKPT] [--save-model OUT.circle]
//          [--infer X.f32 --out OUT.f32]
//
// The steps run in this order: import (with the WOF file as wof_ptr if given), loadCheckpoint,
// K training steps, saveCheckpoint, saveModel, inference. X and Y are raw little-endian float32
// samples (S x input size, S x output size); S must be a multiple of B. The step that starts
// with the runtime's step counter at s trains on batch (s mod S/B), so a run resumed from a
// checkpoint (which restores the counter) sees the same batches as an uninterrupted run.
// --train-layers L trains (and saves) only the last L operators (0, the default: all).
// Inference runs every sample of --infer through the model one at a time (after saving: the
// runtime's reset() between samples also clears Adam's state) and writes the outputs.
//
// stdout gets one "key=value ..." line per step taken; exit status: 0 done, 2 usage or I/O,
// 3 import refused, 4 checkpoint refused, 5 training failed, 6 saving failed, 7 inference failed.
#include "OMTrainingInterpreter.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace om = onert_micro;

namespace
{

[[noreturn]] void fail(int code, const std::string &what)
{
  std::fprintf(stderr, "driver: %s\n", what.c_str());
  std::exit(code);
}

std::vector<char> slurp(const std::string &path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(2, "cannot read " + path);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<float> floats(const std::string &path)
{
  std::vector<char> raw = slurp(path);
  if (raw.size() % sizeof(float) != 0)
    fail(2, path + ": not a whole number of float32 values");
  std::vector<float> out(raw.size() / sizeof(float));
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

// --flag value pairs; every flag takes exactly one value.
std::map<std::string, std::string> parse(int argc, char **argv)
{
  std::map<std::string, std::string> args;
  for (int k = 1; k < argc; k += 2)
  {
    std::string flag = argv[k];
    if (flag.rfind("--", 0) != 0 || k + 1 >= argc)
      fail(2, "usage: driver --model M --opt sgd|adam [--flag value ...] (see driver.cpp)");
    args[flag.substr(2)] = argv[k + 1];
  }
  return args;
}

std::string get(const std::map<std::string, std::string> &args, const char *key,
                const char *fallback = nullptr)
{
  auto it = args.find(key);
  if (it != args.end())
    return it->second;
  if (fallback == nullptr)
    fail(2, std::string("missing --") + key);
  return fallback;
}

} // namespace

int main(int argc, char **argv)
{
  const auto args = parse(argc, argv);
  const std::string opt = get(args, "opt");
  if (opt != "sgd" && opt != "adam")
    fail(2, "--opt must be sgd or adam");

  // The runtime trains in place: weights live in these buffers (the model's, or the WOF's
  // when one is given), so both stay alive and writable for the whole run.
  std::vector<char> model = slurp(get(args, "model"));
  std::vector<char> wof;
  om::OMConfig config;
  config.train_mode = true;
  config.model_ptr = model.data();
  config.model_size = model.size();
  if (args.count("wof"))
  {
    wof = slurp(args.at("wof"));
    config.wof_ptr = wof.data();
  }
  om::OMTrainingContext &tc = config.training_context;
  tc.batch_size = static_cast<uint32_t>(std::stoul(get(args, "batch", "1")));
  tc.num_of_train_layers = static_cast<uint32_t>(std::stoul(get(args, "train-layers", "0")));
  tc.loss = om::MSE;
  tc.optimizer = opt == "adam" ? om::ADAM : om::SGD;
  tc.learning_rate = std::stof(get(args, "lr", "0.01"));
  tc.beta = std::stof(get(args, "beta1", "0.9"));
  tc.beta_squares = std::stof(get(args, "beta2", "0.999"));
  tc.epsilon = std::stof(get(args, "eps", "1e-7"));

  om::OMTrainingInterpreter interp;
  om::OMStatus st = interp.importTrainModel(model.data(), config);
  std::printf("import status=%d in=%u out=%u\n", st, interp.getInputSizeAt(0),
              interp.getOutputSizeAt(0));
  if (st != om::Ok)
    return 3;
  const uint32_t n_in = interp.getInputSizeAt(0), n_out = interp.getOutputSizeAt(0);

  if (args.count("load"))
  {
    st = interp.loadCheckpoint(config, args.at("load").c_str());
    std::printf("load status=%d step=%u epoch=%u\n", st, tc.num_step, tc.num_epoch);
    if (st != om::Ok)
      return 4;
  }

  const uint32_t steps = static_cast<uint32_t>(std::stoul(get(args, "steps", "0")));
  if (steps > 0)
  {
    std::vector<float> x = floats(get(args, "x")), y = floats(get(args, "y"));
    const size_t samples = x.size() / n_in;
    if (x.size() != samples * n_in || y.size() != samples * n_out || samples == 0 ||
        samples % tc.batch_size != 0)
      fail(2, "--x/--y do not hold a whole number of batches for this model");
    const size_t batches = samples / tc.batch_size;
    for (uint32_t k = 0; k < steps; ++k)
    {
      const size_t batch = tc.num_step % batches;
      interp.setInput(reinterpret_cast<uint8_t *>(x.data() + batch * tc.batch_size * n_in), 0);
      interp.setTarget(reinterpret_cast<uint8_t *>(y.data() + batch * tc.batch_size * n_out), 0);
      st = interp.trainSingleStep(config);
      std::printf("train status=%d step=%u batch=%zu\n", st, tc.num_step, batch);
      if (st != om::Ok)
        return 5;
    }
  }

  if (args.count("save"))
  {
#ifdef OCKPT_SCHEMA3_PATCH // the runtime patched by tests/interop/micro/patch (schema 3)
    st = interp.saveCheckpoint(config, args.at("save").c_str(),
                               static_cast<uint32_t>(std::stoul(get(args, "save-schema", "1"))));
#else
    st = interp.saveCheckpoint(config, args.at("save").c_str());
#endif
    std::printf("save status=%d step=%u epoch=%u\n", st, tc.num_step, tc.num_epoch);
    if (st != om::Ok)
      return 6;
  }
  if (args.count("save-model"))
  {
    st = interp.saveModel(config, args.at("save-model").c_str());
    std::printf("save-model status=%d\n", st);
    if (st != om::Ok)
      return 6;
  }

  if (args.count("infer"))
  {
    std::vector<float> x = floats(args.at("infer"));
    const size_t samples = x.size() / n_in;
    if (x.size() != samples * n_in)
      fail(2, "--infer does not hold whole samples for this model");
    std::vector<float> out(samples * n_out);
    for (size_t s = 0; s < samples; ++s)
    {
      interp.reset();
      interp.allocateInputs();
      std::memcpy(interp.getInputDataAt(0), x.data() + s * n_in, n_in * sizeof(float));
      st = interp.run(config);
      const void *result = interp.getOutputDataAt(0);
      if (st != om::Ok || result == nullptr)
      {
        std::printf("infer status=%d sample=%zu\n", st, s);
        return 7;
      }
      std::memcpy(out.data() + s * n_out, result, n_out * sizeof(float));
    }
    interp.reset();
    std::ofstream o(get(args, "out"), std::ios::binary | std::ios::trunc);
    o.write(reinterpret_cast<const char *>(out.data()), out.size() * sizeof(float));
    if (!o)
      fail(2, "cannot write --out");
    std::printf("infer status=0 samples=%zu\n", samples);
  }
  return 0;
}
