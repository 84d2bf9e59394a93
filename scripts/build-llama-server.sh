#!/usr/bin/env bash
# Builds llama.cpp's llama-server from source for cairn's opt-in local-server tests
# (`CAIRN_LOCAL_LLM=DIR cargo test -- --ignored local_server`), and writes the tiny GGUF models
# they load.
#
#   scripts/build-llama-server.sh [DIR]
#
# DIR (default: $CAIRN_LOCAL_LLM, else ~/.cache/cairn-local-llm) receives
#   bin/llama-server   the server, built for this CPU (no GPU, no HTTPS, no web UI)
#   tiny.gguf          a two-layer model with random weights and a real tokenizer vocabulary
#   tiny-toolcall.gguf the same, opening every answer with a malformed tool call
# Nothing is written inside the repository. The source is the llama.cpp that the
# `llama-cpp-python` sdist on PyPI vendors, fetched with pip; building needs cmake and a C++17
# compiler (`apt-get install -y cmake g++`). The build is niced and runs on JOBS cores (default
# 2); it took 1 h 45 min on a 2-core machine shared with other builds. Run it again to write
# missing models: a built server is kept.
set -euo pipefail

dir="${1:-${CAIRN_LOCAL_LLM:-$HOME/.cache/cairn-local-llm}}"
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
jobs="${JOBS:-2}"
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$dir/bin"
dir="$(cd "$dir" && pwd)"
src="$dir/llama_cpp_python-$version/vendor/llama.cpp"

if [[ ! -d "$src" ]]; then
    sdist="$dir/llama_cpp_python-$version.tar.gz"
    if [[ ! -f "$sdist" ]]; then
        # --no-binary for this package only: its build tools come as wheels.
        python3 -m pip download "llama-cpp-python==$version" --no-deps --no-binary llama-cpp-python -d "$dir"
    fi
    tar -xzf "$sdist" -C "$dir" "llama_cpp_python-$version/vendor/llama.cpp"
fi

if [[ ! -x "$dir/bin/llama-server" ]]; then
    command -v cmake >/dev/null || { echo "cmake is missing: apt-get install -y cmake" >&2; exit 1; }
    start=$(date +%s)
    nice -n 10 cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF
    nice -n 10 cmake --build "$dir/build" --target llama-server -j "$jobs"
    cp "$dir/build/bin/llama-server" "$dir/bin/llama-server"
    echo "built $dir/bin/llama-server in $(( $(date +%s) - start )) s"
fi

# The models: the gguf package in a virtualenv of DIR, the vocabulary and the chat template from
# the llama.cpp source (Qwen2's tokenizer, Qwen2.5's template with tool calls).
models="$src/models"
if [[ ! -f "$dir/tiny.gguf" || ! -f "$dir/tiny-toolcall.gguf" ]]; then
    [[ -x "$dir/venv/bin/python" ]] || python3 -m venv "$dir/venv"
    "$dir/venv/bin/python" -c 'import gguf' 2>/dev/null || "$dir/venv/bin/pip" install --quiet gguf
    for variant in "" "--tool-call"; do
        out="$dir/tiny${variant:+-toolcall}.gguf"
        "$dir/venv/bin/python" "$here/tiny_gguf.py" "$models/ggml-vocab-qwen2.gguf" \
            "$models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" "$out" $variant
    done
fi
echo "CAIRN_LOCAL_LLM=$dir"
