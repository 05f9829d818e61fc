#!/bin/sh
# vram fit on files the tests write (GGUF, safetensors shards) and on the
# golden configs: the breakdown, the GPUs each precision fits, the plan for
# several models, and bad or hostile files refused with exit 2.
. "$(dirname "$0")/lib.sh"
: "${MKMODEL:?}"
CFG="$SRC/tests/fixtures/configs"

run() { OUT=$("$@" 2>&1); RC=$?; }

run "$VRAM" fit --vram 16G --ctx 8192 "$CFG/llama3.1-8b.json"
expect_eq "a config.json: exit 0" "$RC" 0
expect_match "names the model, its size and storage" "$OUT" \
    '^llama3.1-8b \(llama, 8.03 B params, stored bf16\)   torch, context 8192 tokens'
expect_match "bf16 does not fit 16 GiB" "$OUT" 'bf16 .* 18.1 GiB   not GPU 0 \(16.0 GiB free\)'
expect_match "int8 does" "$OUT" 'int8 .*   GPU 0$'
expect_match "and says the best that fits" "$OUT" 'best that fits: int8'

J=$("$VRAM" fit --json --vram 16G --ctx 8192 "$CFG/llama3.1-8b.json")
expect_eq "JSON: the parts add up to the total" \
    "$(echo "$J" | jq '[.models[0].estimates[] | (.weights + .kv_cache + .activations + .runtime == .total)] | all')" true
expect_eq "JSON: the KV cache of 8192 tokens in bf16 is 1 GiB" \
    "$(echo "$J" | jq '.models[0].estimates[0].kv_cache')" "$GiB"
expect_eq "JSON: fits lists GPU indexes" "$(echo "$J" | jq -c '[.models[0].estimates[].fits]')" \
    '[[],[0],[0]]'

# a GGUF written here: read as stored, q4_k. Its bytes: the q8_0 embedding
# 4096 x 32000 / 32 x 34 = 139264000, and per layer (q4_k, 144 bytes per 256)
# 2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336 weights = 122683392 bytes, x 32
"$MKMODEL" gguf "$T/m.gguf"
J=$("$VRAM" fit --json --vram 8G --runtime torch "$T/m.gguf")
expect_eq "GGUF: the stored type and the tensor bytes" \
    "$(echo "$J" | jq -c '.models[0] | [.stored, .layers, .heads, .kv_heads, .weight_bytes]')" \
    '["q4_k",32,32,8,4065132544]'
expect_eq "GGUF: as stored comes first, with the file's bytes as its weights" \
    "$(echo "$J" | jq -c '.models[0].estimates[0] | [.precision, .weights]')" \
    '["Q4_K_M (as stored)",4065132544]'
# llama.cpp runs GGUF files: without --runtime it is the one estimated, and
# its GPU holds the layers, not the embedding (it has no output head: tied,
# so a copy of the embedding goes to the GPU as the output layer)
J=$("$VRAM" fit --json --vram 8G "$T/m.gguf")
expect_eq "GGUF: llama.cpp by default, all 33 layers on the GPU" \
    "$(echo "$J" | jq -c '.models[0] | [.runtime, .estimates[0].gpu_layers, .estimates[0].weights]')" \
    '["llamacpp",33,4065132544]'
J=$("$VRAM" fit --json --vram 8G --ngl 17 "$T/m.gguf")
expect_eq "--ngl 17: the output layer and the last 16 layers" \
    "$(echo "$J" | jq -c '.models[0].estimates[0] | [.gpu_layers, .weights]')" \
    "[17,$((139264000 + 16 * 122683392))]"
run "$VRAM" fit --vram 3G --ctx 8192 "$T/m.gguf"
expect_match "3 GiB: how many layers fit, and up to which context all do" "$OUT" \
    'llama.cpp on GPU 0 \(3.00 GiB free\): -ngl [0-9]+ of 33 fits at 8192 tokens .*; all layers do not fit even at 256 tokens'
run "$VRAM" fit --vram 6G --ctx 8192 "$T/m.gguf"
expect_match "6 GiB: all layers, and the longest context" "$OUT" \
    'all 33 layers fit at 8192 tokens; all layers up to [0-9]+ tokens'

# a stored Q4_K_M that fits: what is on disk is the answer, not a
# precision that would need another download
"$MKMODEL" gguf "$T/small.gguf" 0.2
run "$VRAM" fit --vram 8G "$T/small.gguf"
expect_match "a Q4_K_M GGUF that fits: it is the best, as it is on disk; bf16 said as another download" "$OUT" \
    'best that fits: Q4_K_M \(as stored\), what is on disk \(bf16 fits too: another download\)$'
expect_eq "... and in JSON" "$("$VRAM" fit --json --vram 8G "$T/small.gguf" | jq -r '.models[0].best')" "Q4_K_M (as stored)"

# a folder of shards with an index
"$MKMODEL" shards "$T/shards" 12
J=$("$VRAM" fit --json --vram 8G "$T/shards")
expect_eq "safetensors shards: params from the headers" \
    "$(echo "$J" | jq -c '.models[0] | [.params, .weight_bytes, .stored, .layers]')" \
    "[201326592,402653184,\"bf16\",12]"

# several models: who lives together, who takes turns
J=$("$VRAM" fit --json --vram 20G "$CFG/llama3.1-8b.json" "$CFG/qwen2-0.5b.json" "$CFG/mistral-7b.json")
expect_eq "plan: two fit together on 20 GiB" \
    "$(echo "$J" | jq -c '.plan.together[0].models | length')" 2
expect_eq "plan: one takes turns" "$(echo "$J" | jq -c '.plan.take_turns | length')" 1
run "$VRAM" fit --vram 20G "$CFG/llama3.1-8b.json" "$CFG/qwen2-0.5b.json" "$CFG/mistral-7b.json"
expect_match "text plan" "$OUT" 'takes turns: .*fits alone, not beside the others'
expect_match "text plan: the GPU by its index" "$OUT" '^  together on GPU 0: llama3.1-8b \(bf16\)'
run "$VRAM" fit --vram 3G "$T/m.gguf" "$CFG/qwen2-0.5b.json"
expect_match "a GGUF that fits only in part takes turns, and says with which -ngl" "$OUT" \
    'takes turns: mkmodel llama \(alone only with -ngl [0-9]+ of 33, the rest on the CPU\)'
expect_eq "... exit 0: it fits, with -ngl N" "$RC" 0

# by shape, for what-ifs
J=$("$VRAM" fit --json --vram 40G --params 13B --layers 40 --hidden 5120 --heads 40)
expect_eq "--params 13B" "$(echo "$J" | jq '.models[0].params')" 13000000000

# against the simulated workstation's free memory (13.9 GiB with the desktop)
run "$VRAM" --sim "$WS" fit --ctx 8192 "$CFG/mistral-7b.json"
expect_match "the workstation's GPU: bf16 7B does not fit beside the desktop" "$OUT" \
    'bf16 .*not GPU 0 \(13.9 GiB free\)'

# training
J=$("$VRAM" fit --json --vram 80G --train "$CFG/mistral-7b.json" --dtype bf16)
expect_eq "training: AdamW moments and temporary" \
    "$(echo "$J" | jq '.models[0].estimates[0].optimizer == 3 * .models[0].estimates[0].gradients')" true

# bad and hostile input: exit 2, the file and the problem named
head -c 100 "$T/m.gguf" >"$T/trunc.gguf"
run "$VRAM" fit --vram 8G "$T/trunc.gguf"
expect_eq "a truncated GGUF: exit 2" "$RC" 2
expect_match "names the file" "$OUT" "trunc.gguf: "
printf '\377\377\377\377\377\377\377\177{}' >"$T/huge.safetensors"
run "$VRAM" fit --vram 8G "$T/huge.safetensors"
expect_eq "a huge header length: exit 2" "$RC" 2
expect_match "says the length is impossible" "$OUT" "huge.safetensors: header length .* is impossible"
head -c 4096 "$T/m.gguf" >"$T/cut.gguf"
dd if=/dev/zero bs=1 count=64 >>"$T/cut.gguf" 2>/dev/null
run "$VRAM" fit "$T/cut.gguf"
expect_eq "a GGUF cut short: exit 2" "$RC" 2
mkdir -p "$T/empty"
run "$VRAM" fit "$T/empty"
expect_match "a folder with no model" "$OUT" "no \*.safetensors, model.safetensors.index.json, config.json or .gguf"
run "$VRAM" fit "$T/nothing-here"
expect_eq "a missing path: exit 2" "$RC" 2
run "$VRAM" fit --ctx 0 "$CFG/qwen2-0.5b.json"
expect_eq "--ctx 0: exit 2" "$RC" 2
run "$VRAM" fit --dtype q4 "$CFG/qwen2-0.5b.json"
expect_match "--dtype q4 points to --quant" "$OUT" "--dtype 'q4': not one vram knows"
mkdir -p "$T/nohome"
OUT=$(HOME="$T/nohome" "$VRAM" fit 2>&1)
expect_match "no model and no local store: says where it looked" "$OUT" \
    "no local models found in Ollama \($T/nohome/.ollama/models"

# over several GPUs: each GPU's share, both ways, and whether the machine has room
OUT=$("$VRAM" --sim "$SRV" fit --gpus 2 --json "$CFG/mixtral-8x7b.json")
W=$(echo "$OUT" | jq '.models[0].estimates[0].weights')
expect_eq "--gpus 2: a tensor split holds half the weights per GPU" \
    "$(echo "$OUT" | jq ".models[0].split.tensor.weights == ($W / 2 | round)")" true
expect_eq "--gpus 2: the 8-GPU server has room now" "$(echo "$OUT" | jq '.models[0].split.tensor.fits_now')" true
run "$VRAM" --sim "$SRV" fit --gpus 16 "$CFG/mixtral-8x7b.json"
expect_match "--gpus 16 on 8 GPUs: does not fit, says why" "$OUT" \
    "over 16 GPUs, tensor split .*does not fit now \(8 of 8 GPUs have room for a share\)"
run "$VRAM" fit --gpus 0 "$CFG/qwen2-0.5b.json"
expect_eq "--gpus 0: exit 2" "$RC" 2

finish
