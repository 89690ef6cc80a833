// Measures onert-micro's own schema-1 checkpoint loader (OMTrainingInterpreter::loadCheckpoint):
// the heap it takes above what importing the model left, counted by heap_count.h.
//
//   om_load_probe --model M.circle --opt sgd|adam --load CKPT [--batch B]
//
// stdout: "load status=S heap_peak=P heap_kept=K" (bytes; kept: Adam's m and v buffers).
#include "OMTrainingInterpreter.h"
#include "heap_count.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace om = onert_micro;

int main(int argc, char **argv)
{
  std::map<std::string, std::string> args;
  for (int k = 1; k + 1 < argc; k += 2)
    args[std::string(argv[k]).substr(2)] = argv[k + 1];
  if (!args.count("model") || !args.count("opt") || !args.count("load"))
  {
    std::fprintf(stderr, "usage: om_load_probe --model M --opt sgd|adam --load CKPT\n");
    return 2;
  }
  std::ifstream in(args["model"], std::ios::binary);
  std::vector<char> model((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  om::OMConfig config;
  config.train_mode = true;
  config.model_ptr = model.data();
  config.model_size = model.size();
  config.training_context.batch_size =
    static_cast<uint32_t>(std::stoul(args.count("batch") ? args["batch"] : "1"));
  config.training_context.loss = om::MSE;
  config.training_context.optimizer = args["opt"] == "adam" ? om::ADAM : om::SGD;
  static om::OMTrainingInterpreter interp;
  if (interp.importTrainModel(model.data(), config) != om::Ok)
    return 3;
  heap_mark();
  const om::OMStatus st = interp.loadCheckpoint(config, args["load"].c_str());
  std::printf("load status=%d heap_peak=%lld heap_kept=%lld\n", st, heap_peak(), heap_now());
  return st == om::Ok ? 0 : 4;
}
