# Sourced by the .ci scripts that need Node 22: installs it from npm (the `node` package) into a cache
# folder when it is missing there, and puts it first on PATH. NODE22_DIR overrides the folder.
NODE_DIR=${NODE22_DIR:-$HOME/.cache/lcp-node22}
if ! "$NODE_DIR/node_modules/.bin/node" --version 2>/dev/null | grep -q '^v22'; then
  npm install --silent --prefix "$NODE_DIR" node@22 >/dev/null
fi
export PATH="$NODE_DIR/node_modules/.bin:$PATH"
