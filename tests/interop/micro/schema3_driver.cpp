// onert-checkpoint's schema-3 driver for the onert-micro training runtime (a test peer).
//
// The runtime trains from a schema-3 checkpoint read by this project's C kit (spec/c) and saves
// its result through the C kit's writer, without the runtime's own checkpoint code:
//
//   schema3_driver --model M.circle --opt sgd|adam --load IN.ckpt3 [--batch B] [--lr LR]
//                  [--beta1 B1] [--beta2 B2] [--eps E] [--train-layers L]
//                  [--x X.f32 --y Y.f32 --steps K] [--save OUT.ckpt3]
//
// Load: the checkpoint is read ONCE through the C kit's streaming reader: ockpt_read_stream_deferred
// over an fread callback checks every rule but the data blocks' checksums (B6) without reading a
// data byte, then each trainable tensor's bytes go through ockpt_v3_copy_verified, block by block
// into one buffer of the file's block size, each block's CRC-32C checked there before a byte of
// it is copied, into the runtime's training buffers (a file without per-block checksums is read
// whole first, as ockpt_read_stream does, and copied with ockpt_file_copy): the weights into the model buffer the runtime trains in place
// (OMRuntimeContext::getConstDataByTensorIndex), Adam's m and v into buffers allocated by the
// runtime's allocator and handed to its Adam object (Adam::setExponentAvg*DataByTensorIndex),
// the step and epoch into the training context. These are the runtime's own loader's targets,
// in its order (last operator first), with its checks (every trainable tensor present) plus the
// kit's (the sizes must be the model's).
//
// What onert-micro's API exposes: OMTrainingInterpreter hands out neither weight nor optimizer
// buffers (only loadCheckpoint/saveCheckpoint of whole schema-1 images, by path). The public
// class under it, core::OMTrainingRuntimeModule, gives the forward graph's context (the weight
// pointers, getRuntimeGraphAt) but keeps its training handler, the only way to the Adam object,
// in a private member; the Adam object's accessors themselves are public. This driver reaches
// the handler with the explicit-instantiation access idiom (below), and nothing else private.
//
// Training is driver.cpp's loop (same data, same batch choice from the restored step), so this
// driver and driver.cpp (the runtime's own loadCheckpoint/saveCheckpoint) start from the same
// content and must end with the same bits.
//
// Save: schema 3 through ockpt_write (OCKPT_W_V3), the records, slots, state and origin of the
// loaded file with the trained bytes (data order kept through each range's source offset), the
// runtime's step and epoch.
//
// stdout: "load ..." with the stream's figures (callback reads, the reader's state, and the heap
// the load took: heap_count.h), one "train ..." line per step, "save ...". A refused file (by the
// read, or by a block a copy verifies) prints "load refused code=.. field=.. offset=..": the
// runtime's buffers filled so far are then undefined (SPEC.md 6.5) and nothing is trained.
// Exit status: 0 done, 2 usage or I/O, 3 import refused, 4 checkpoint refused, 5 training
// failed, 6 saving failed.
#include "OMConfig.h"
#include "core/OMRuntimeShape.h"
#include "core/OMTrainingRuntimeModule.h"
#include "core/memory/OMMemoryManager.h"
#include "heap_count.h"

extern "C" {
#include "ockpt.h"
#include "ockpt_write.h"
}

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace om = onert_micro;

// The explicit-instantiation access idiom: an explicit instantiation may name a private member
// ([temp.spec]/6), and the friend function it defines returns the member pointer.
template <typename Tag, typename Tag::type Member> struct Expose
{
  friend typename Tag::type member_of(Tag) { return Member; }
};
struct HandlerOf
{
  using type = om::core::train::OMTrainingHandler om::core::OMTrainingRuntimeModule::*;
  friend type member_of(HandlerOf);
};
template struct Expose<HandlerOf, &om::core::OMTrainingRuntimeModule::_training_handler>;

namespace
{

[[noreturn]] void fail(int code, const std::string &what)
{
  std::fprintf(stderr, "schema3_driver: %s\n", what.c_str());
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

std::map<std::string, std::string> parse(int argc, char **argv)
{
  std::map<std::string, std::string> args;
  for (int k = 1; k < argc; k += 2)
  {
    std::string flag = argv[k];
    if (flag.rfind("--", 0) != 0 || k + 1 >= argc)
      fail(2, "usage: schema3_driver --model M --opt sgd|adam --load IN [...] (see the source)");
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

// The read-at-offset callback of the streaming reader, with what it was asked for. Each read's
// place is logged (static memory, not the heap the load is measured by) so that the bytes read
// inside the data section can be counted once the reader says where it is.
constexpr size_t LOG = 1 << 16;
uint64_t log_at[LOG];
uint32_t log_len[LOG];

struct Source
{
  std::FILE *fp = nullptr;
  uint64_t reads = 0, bytes = 0, largest = 0;
};

// Bytes of the logged reads [from, to) inside [lo, hi); UINT64_MAX when the log overflowed.
uint64_t logged_bytes(uint64_t from, uint64_t to, uint64_t lo, uint64_t hi)
{
  uint64_t sum = 0;
  if (to > LOG)
    return UINT64_MAX;
  for (uint64_t k = from; k < to; ++k)
  {
    const uint64_t a = std::max(log_at[k], lo), b = std::min(log_at[k] + log_len[k], hi);
    sum += b > a ? b - a : 0;
  }
  return sum;
}

int read_at(void *ctx, uint64_t offset, void *dst, size_t len)
{
  auto *src = static_cast<Source *>(ctx);
  if (src->reads < LOG)
  {
    log_at[src->reads] = offset;
    log_len[src->reads] = static_cast<uint32_t>(len);
  }
  src->reads += 1;
  src->bytes += len;
  src->largest = std::max<uint64_t>(src->largest, len);
  if (std::fseek(src->fp, static_cast<long>(offset), SEEK_SET) != 0)
    return -1;
  return std::fread(dst, 1, len, src->fp) == len ? 0 : -1;
}

int write_to(void *ctx, const void *data, size_t len)
{
  return std::fwrite(data, 1, len, static_cast<std::FILE *>(ctx)) == len ? 0 : -1;
}

// Bytes at `offset` of the file read through the stream (names, keys, values).
std::string bytes_at(const ockpt_file &f, uint64_t offset, uint64_t len)
{
  std::string out(len, '\0');
  if (len != 0 && ockpt_file_copy(&f, offset, &out[0], len) != 0)
    fail(4, "a read through the stream failed");
  return out;
}

// One tensor record of the loaded file, and its m and v ranges (nbytes OCKPT_W_ABSENT: none).
struct Record
{
  ockpt_tensor_info info;
  std::string name;
  uint64_t slot_offset[2] = {0, 0};
  uint64_t slot_nbytes[2] = {OCKPT_W_ABSENT, OCKPT_W_ABSENT};
};

// One state entry of the loaded file (string and bytes values kept here).
struct StateEntry
{
  std::string key;
  ockpt_state_info info;
  std::string value;
};

// The trainable tensors in the order the runtime's checkpoint code visits them: the last
// `train_layers` operators, last first; their constant inputs when the operator is trainable.
std::vector<uint16_t> trainable(om::core::OMRuntimeContext &context, uint32_t train_layers)
{
  std::vector<uint16_t> out;
  const auto *operators = context.getCircleOperators();
  const auto *opcodes = context.getCircleOpcodes();
  const uint32_t kernels = operators->size();
  const uint32_t last = std::min(kernels, train_layers == 0 ? kernels : train_layers);
  for (uint32_t k = 0; k < last; ++k)
  {
    const auto *op = operators->operator[](kernels - k - 1);
    const auto code = opcodes->operator[](op->opcode_index())->builtin_code();
    if (code != circle::BuiltinOperator_FULLY_CONNECTED &&
        code != circle::BuiltinOperator_CONV_2D && code != circle::BuiltinOperator_GRU)
      continue;
    for (uint32_t i = 0; i < op->inputs()->size(); ++i)
    {
      const int32_t t = op->inputs()->operator[](i);
      if (t >= 0 && context.isConstTensor(t))
        out.push_back(static_cast<uint16_t>(t));
    }
  }
  return out;
}

uint64_t float_bytes(om::core::OMRuntimeContext &context, uint16_t t)
{
  om::core::OMRuntimeShape shape(context.getTensorByIndex(t));
  return static_cast<uint64_t>(shape.flatSize()) * sizeof(float);
}

uint8_t *weights_of(om::core::OMRuntimeContext &context, uint16_t t)
{
  uint8_t *data = nullptr;
  if (context.getConstDataByTensorIndex(&data, t) != om::Ok || data == nullptr)
    fail(4, "tensor " + std::to_string(t) + " has no buffer in the model");
  return data;
}

} // namespace

int main(int argc, char **argv)
{
  const auto args = parse(argc, argv);
  const std::string opt = get(args, "opt");
  if (opt != "sgd" && opt != "adam")
    fail(2, "--opt must be sgd or adam");
  const bool adam = opt == "adam";

  std::vector<char> model = slurp(get(args, "model"));
  om::OMConfig config;
  config.train_mode = true;
  config.model_ptr = model.data();
  config.model_size = model.size();
  om::OMTrainingContext &tc = config.training_context;
  tc.batch_size = static_cast<uint32_t>(std::stoul(get(args, "batch", "1")));
  tc.num_of_train_layers = static_cast<uint32_t>(std::stoul(get(args, "train-layers", "0")));
  tc.loss = om::MSE;
  tc.optimizer = adam ? om::ADAM : om::SGD;
  tc.learning_rate = std::stof(get(args, "lr", "0.01"));
  tc.beta = std::stof(get(args, "beta1", "0.9"));
  tc.beta_squares = std::stof(get(args, "beta2", "0.999"));
  tc.epsilon = std::stof(get(args, "eps", "1e-7"));

  static om::core::OMTrainingRuntimeModule runtime;
  om::OMStatus st = runtime.importTrainModel(model.data(), config);
  std::printf("import status=%d\n", st);
  if (st != om::Ok)
    return 3;
  om::core::OMRuntimeGraph *graph = nullptr;
  if (runtime.getRuntimeGraphAt(0, &graph) != om::Ok || graph == nullptr)
    return 3;
  om::core::OMRuntimeContext &context = graph->getRuntimeContext();
  om::core::train::OMTrainingStorage &storage =
    (runtime.*member_of(HandlerOf{})).getTrainingStorage();
  om::train::optimizers::Adam *adam_opt = adam ? storage.getAdam() : nullptr;
  if (adam && adam_opt == nullptr)
    return 3;
  const std::vector<uint16_t> trained = trainable(context, tc.num_of_train_layers);

  // ---- load: every rule but B6, then the bytes copied, each block verified on the way --------
  const std::string in_path = get(args, "load");
  heap_mark(); // the load's heap: what it allocates above what import left
  Source src;
  src.fp = std::fopen(in_path.c_str(), "rb");
  // unbuffered, as a flash read is: the reader's own cache is the only buffer of the load
  if (src.fp == nullptr || std::setvbuf(src.fp, nullptr, _IONBF, 0) != 0 ||
      std::fseek(src.fp, 0, SEEK_END) != 0)
    fail(2, "cannot read " + in_path);
  const uint64_t in_size = static_cast<uint64_t>(std::ftell(src.fp));
  static ockpt_stream stream; // the reader's whole state, with `f`
  ockpt_file f;
  ockpt_stream_init(&stream, read_at, &src, in_size);
  const ockpt_result r = ockpt_read_stream_deferred(&stream, &f, nullptr, 0);
  if (r.code != OCKPT_OK && r.code != OCKPT_DEFERRED)
  {
    std::printf("load refused code=%s field=%s offset=%llu\n", ockpt_error_name(r.code), r.field,
                static_cast<unsigned long long>(r.offset));
    return 4;
  }
  if (f.revision != OCKPT_REV_V3)
    fail(4, "not a schema-3 checkpoint");
  const uint64_t validation_reads = src.reads, validation_bytes = src.bytes;
  // the one block buffer of the verifying copies (none without a data_blocks section)
  const uint32_t block_size = ockpt_v3_block_size(&f);
  std::vector<uint8_t> block(block_size);
  auto copy = [&](uint64_t offset, void *dst, uint64_t nbytes) -> bool {
    if (block_size == 0)
      return ockpt_file_copy(&f, offset, dst, nbytes) == 0 || (fail(4, "a read failed"), false);
    const ockpt_result c =
      ockpt_v3_copy_verified(&f, offset, dst, nbytes, block.data(), block.size());
    if (c.code == OCKPT_OK)
      return true;
    std::printf("load refused code=%s field=%s offset=%llu\n", ockpt_error_name(c.code), c.field,
                static_cast<unsigned long long>(c.offset));
    return false;
  };

  // Slots m and v, by name (an Adam checkpoint); an SGD run takes a file without slots.
  int slot_of[2] = {-1, -1};
  for (uint32_t j = 0; j < f.container.num_slots; ++j)
  {
    uint64_t at;
    uint32_t len;
    ockpt_sec_slot_at(&f, j, &at, &len);
    const std::string name = bytes_at(f, at, len);
    if (name == "m" || name == "v")
      slot_of[name == "m" ? 0 : 1] = static_cast<int>(j);
  }
  const bool optimizer_kind_fits =
    f.container.optimizer.present == 0 ||
    f.container.optimizer_kind == (adam ? OCKPT_CONTAINER_OPT_ADAM : OCKPT_CONTAINER_OPT_SGD);
  if (!optimizer_kind_fits)
    fail(4, "the checkpoint's optimizer is not --opt");

  std::vector<Record> records(f.container.num_tensors);
  ockpt_v3_cursor cursor;
  ockpt_v3_cursor_init(&f, &cursor);
  for (uint32_t k = 0; k < f.container.num_tensors; ++k)
  {
    Record &rec = records[k];
    if (ockpt_v3_next_tensor(&f, &cursor, &rec.info) != 1)
      fail(4, "record " + std::to_string(k) + " cannot be read");
    if (rec.info.flags & OCKPT_V2_HAS_NAME)
      rec.name = bytes_at(f, rec.info.name_offset, rec.info.name_len);
    for (int s = 0; s < 2; ++s)
    {
      uint32_t index;
      if (slot_of[s] >= 0 && ockpt_v3_slot_entry(&f, &cursor, static_cast<uint32_t>(slot_of[s]),
                                                 k, &index, &rec.slot_offset[s],
                                                 &rec.slot_nbytes[s]) != 1)
        rec.slot_nbytes[s] = OCKPT_W_ABSENT;
    }
  }
  auto record_of = [&](uint32_t index) -> Record * {
    for (Record &rec : records)
      if (rec.info.index == index)
        return &rec;
    return nullptr;
  };

  if (adam)
    adam_opt->fullReset(); // as the runtime's loader: the file's state replaces the run's
  uint64_t copied = 0;
  for (uint16_t t : trained)
  {
    Record *rec = record_of(t);
    const uint64_t nbytes = float_bytes(context, t);
    if (rec == nullptr || rec->info.nbytes != nbytes)
      fail(4, "tensor " + std::to_string(t) + " is missing or not the model's size");
    if (!copy(rec->info.offset, weights_of(context, t), nbytes))
      return 4;
    copied += nbytes;
    if (!adam)
      continue;
    const bool has_m = rec->slot_nbytes[0] != OCKPT_W_ABSENT;
    const bool has_v = rec->slot_nbytes[1] != OCKPT_W_ABSENT;
    if (!has_m && !has_v)
      continue; // no saved Adam state for this tensor: the runtime starts it from zero
    if (!has_m || !has_v || rec->slot_nbytes[0] != nbytes || rec->slot_nbytes[1] != nbytes)
      fail(4, "tensor " + std::to_string(t) + ": m and v must both hold the model's size");
    uint8_t *m = nullptr, *v = nullptr;
    if (om::core::memory::OMMemoryManager::allocateMemory(nbytes, &m) != om::Ok ||
        om::core::memory::OMMemoryManager::allocateMemory(nbytes, &v) != om::Ok)
      fail(4, "out of memory");
    if (!copy(rec->slot_offset[0], m, nbytes) || !copy(rec->slot_offset[1], v, nbytes))
      return 4;
    adam_opt->setExponentAvgDataByTensorIndex(t, m);
    adam_opt->setExponentAvgSquaresDataByTensorIndex(t, v);
    copied += 2 * nbytes;
  }

  std::vector<StateEntry> state(f.container.num_state);
  bool has_step = false, has_epoch = false;
  for (uint32_t k = 0; k < f.container.num_state; ++k)
  {
    StateEntry &e = state[k];
    ockpt_sec_state(&f, k, &e.info);
    e.key = bytes_at(f, e.info.key_offset, e.info.key_len);
    if (e.info.type == OCKPT_CONTAINER_VALUE_STRING || e.info.type == OCKPT_CONTAINER_VALUE_BYTES)
      e.value = bytes_at(f, e.info.value_offset, e.info.len);
    const bool counter = e.info.type == OCKPT_CONTAINER_VALUE_INT && e.info.i >= 0 &&
                         e.info.i <= static_cast<int64_t>(UINT32_MAX);
    if (e.key == "step" && counter)
      tc.num_step = static_cast<uint32_t>(e.info.i), has_step = true;
    if (e.key == "epoch" && counter)
      tc.num_epoch = static_cast<uint32_t>(e.info.i), has_epoch = true;
  }
  if (!has_step || !has_epoch)
    fail(4, "the checkpoint has no step and epoch (ints in 0..2^32-1)");
  if (ockpt_stream_failed(&stream))
    fail(4, "a read through the stream failed");
  std::printf("load status=0 step=%u epoch=%u file=%llu copied=%llu reads=%llu "
              "validation_reads=%llu validation_bytes=%llu validation_data_bytes=%llu "
              "load_data_bytes=%llu data_bytes=%llu read_bytes=%llu largest_read=%llu "
              "block_size=%u stream_state=%zu file_state=%zu heap_peak=%lld heap_kept=%lld\n",
              tc.num_step, tc.num_epoch, static_cast<unsigned long long>(in_size),
              static_cast<unsigned long long>(copied), static_cast<unsigned long long>(src.reads),
              static_cast<unsigned long long>(validation_reads),
              static_cast<unsigned long long>(validation_bytes),
              static_cast<unsigned long long>(
                logged_bytes(0, validation_reads, f.container.data.offset,
                             f.container.data.offset + f.container.data.length)),
              static_cast<unsigned long long>(
                logged_bytes(0, src.reads, f.container.data.offset, f.container.data.offset + f.container.data.length)),
              static_cast<unsigned long long>(f.container.data.length),
              static_cast<unsigned long long>(src.bytes),
              static_cast<unsigned long long>(src.largest), block_size, sizeof(ockpt_stream),
              sizeof(ockpt_file), heap_peak(), heap_now());

  // ---- train: driver.cpp's loop -------------------------------------------------------------
  const uint32_t steps = static_cast<uint32_t>(std::stoul(get(args, "steps", "0")));
  if (steps > 0)
  {
    const uint32_t n_in = runtime.getInputSizeAt(0), n_out = runtime.getOutputSizeAt(0);
    std::vector<float> x = floats(get(args, "x")), y = floats(get(args, "y"));
    const size_t samples = x.size() / n_in;
    if (x.size() != samples * n_in || y.size() != samples * n_out || samples == 0 ||
        samples % tc.batch_size != 0)
      fail(2, "--x/--y do not hold a whole number of batches for this model");
    const size_t batches = samples / tc.batch_size;
    for (uint32_t k = 0; k < steps; ++k)
    {
      const size_t batch = tc.num_step % batches;
      runtime.setInputData(reinterpret_cast<uint8_t *>(x.data() + batch * tc.batch_size * n_in),
                           0);
      runtime.setTargetData(
        reinterpret_cast<uint8_t *>(y.data() + batch * tc.batch_size * n_out), 0);
      st = runtime.trainSingleStep(config);
      std::printf("train status=%d step=%u batch=%zu\n", st, tc.num_step, batch);
      if (st != om::Ok)
        return 5;
    }
  }

  // ---- save: schema 3 through the C kit's writer ---------------------------------------------
  if (!args.count("save"))
    return 0;
  std::vector<uint16_t> order = trained; // the writer takes records in ascending index order
  std::sort(order.begin(), order.end());
  const bool with_moments = adam && !adam_opt->isReset();
  std::vector<ockpt_w_tensor> tensors(order.size());
  std::vector<ockpt_w_buffer> moments[2] = {std::vector<ockpt_w_buffer>(order.size()),
                                            std::vector<ockpt_w_buffer>(order.size())};
  for (size_t k = 0; k < order.size(); ++k)
  {
    const uint16_t t = order[k];
    const Record *rec = record_of(t);
    const uint64_t nbytes = float_bytes(context, t);
    ockpt_w_tensor &w = tensors[k];
    std::memset(&w, 0, sizeof w);
    w.index = t;
    w.buf = {weights_of(context, t), nbytes, rec ? rec->info.offset : OCKPT_W_NEW};
    if (rec != nullptr) // the record's metadata as loaded
    {
      w.has = rec->info.flags;
      w.model_index = rec->info.model_index;
      w.dtype = rec->info.dtype;
      w.rank = rec->info.rank;
      std::memcpy(w.dims, rec->info.dims, sizeof w.dims);
      w.name = reinterpret_cast<const uint8_t *>(rec->name.data());
      w.name_len = static_cast<uint32_t>(rec->name.size());
    }
    for (int s = 0; s < 2 && with_moments; ++s)
    {
      uint8_t *data = s == 0 ? adam_opt->getExponentAvgDataByTensorIndex(t)
                             : adam_opt->getExponentAvgSquaresDataByTensorIndex(t);
      const bool loaded = rec != nullptr && rec->slot_nbytes[s] != OCKPT_W_ABSENT;
      moments[s][k] = {data, data == nullptr ? OCKPT_W_ABSENT : nbytes,
                       loaded ? rec->slot_offset[s] : OCKPT_W_NEW};
    }
  }
  static const uint8_t m_name[] = {'m'}, v_name[] = {'v'};
  const ockpt_w_slot slots[2] = {{m_name, 1, moments[0].data()}, {v_name, 1, moments[1].data()}};
  std::vector<ockpt_w_state> w_state(state.size());
  for (size_t k = 0; k < state.size(); ++k)
  {
    const StateEntry &e = state[k];
    ockpt_w_state &w = w_state[k];
    w = {reinterpret_cast<const uint8_t *>(e.key.data()), static_cast<uint32_t>(e.key.size()),
         e.info.type, e.info.i, e.info.f, e.value.data(), e.value.size()};
    if (e.key == "step" && e.info.type == OCKPT_CONTAINER_VALUE_INT)
      w.i = tc.num_step;
    if (e.key == "epoch" && e.info.type == OCKPT_CONTAINER_VALUE_INT)
      w.i = tc.num_epoch;
  }
  ockpt_w_checkpoint c;
  std::memset(&c, 0, sizeof c);
  c.tensors = tensors.data();
  c.num_tensors = static_cast<uint32_t>(tensors.size());
  c.has_optimizer = f.container.optimizer.present ? 1 : adam;
  c.optimizer_kind = adam ? OCKPT_CONTAINER_OPT_ADAM : OCKPT_CONTAINER_OPT_SGD;
  c.slots = with_moments ? slots : nullptr;
  c.num_slots = with_moments ? 2 : 0;
  c.state = w_state.data();
  c.num_state = static_cast<uint32_t>(w_state.size());
  c.has_origin = f.container.origin.present ? 1 : 0;
  c.origin_revision = f.container.origin_revision;
  c.origin_dialect = f.container.origin_dialect;
  c.origin_flags = f.container.origin_flags;
  c.origin_num_entries = f.container.origin_num_entries;
  // the loaded file's per-block checksums, at its block size (none: none)
  c.data_block_size = block_size != 0 ? block_size : OCKPT_W_NO_BLOCKS;

  const std::string out_path = args.at("save");
  std::FILE *out = std::fopen(out_path.c_str(), "wb");
  if (out == nullptr)
    fail(2, "cannot write " + out_path);
  const ockpt_w_result w = ockpt_write(&c, OCKPT_W_V3, OCKPT_W_AUTO, write_to, out);
  const bool closed = std::fclose(out) == 0;
  std::printf("save status=%d step=%u epoch=%u bytes=%llu message=\"%s\"\n", w.status,
              tc.num_step, tc.num_epoch, static_cast<unsigned long long>(w.file_size),
              w.message);
  std::fclose(src.fp);
  return w.status == OCKPT_W_OK && closed ? 0 : 6;
}
