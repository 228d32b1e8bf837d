# Sourced by the command-line test scripts: tiny MNIST-format folders written with the shell.
# make_data DIR LABEL...: one random 28x28 image per label, the same set as train and as t10k.
be32() { printf "\\x$(printf %02x $(($1 >> 24 & 255)))\\x$(printf %02x $(($1 >> 16 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))\\x$(printf %02x $(($1 & 255)))"; }
make_data() {
  local dir=$1; shift
  mkdir -p "$dir"
  for set in train t10k; do
    { printf '\x00\x00\x08\x03'; be32 $#; be32 28; be32 28; head -c $(($# * 784)) /dev/urandom; } \
      >"$dir/$set-images-idx3-ubyte"
    { printf '\x00\x00\x08\x01'; be32 $#; for l in "$@"; do printf "\\x$(printf %02x "$l")"; done; } \
      >"$dir/$set-labels-idx1-ubyte"
  done
}
