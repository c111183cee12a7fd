-- trainlint in Neovim's built-in LSP client (Neovim 0.7 or later): put this file in
-- ~/.config/nvim/plugin/ (or require it from init.lua). It starts `trainlint lsp` for Python
-- buffers, rooted at the nearest pyproject.toml / .trainlint.toml / setup.py / .git.
local function root_dir(fname)
  local found = vim.fs and vim.fs.find
    and vim.fs.find({ 'pyproject.toml', '.trainlint.toml', 'setup.py', '.git' }, { path = fname, upward = true })[1]
  return found and vim.fs.dirname(found) or vim.fn.fnamemodify(fname, ':p:h')
end

vim.api.nvim_create_autocmd('FileType', {
  pattern = 'python',
  callback = function(args)
    local fname = vim.api.nvim_buf_get_name(args.buf)
    local root = root_dir(fname)
    local config = {
      name = 'trainlint',
      cmd = { 'trainlint', 'lsp' },
      root_dir = root,
      -- same keys as VS Code's settings; see docs/lsp.md
      init_options = { runReport = root .. '/.trainlint/run.json' },
    }
    if vim.lsp.start then
      vim.lsp.start(config, { bufnr = args.buf })  -- Neovim 0.8+: reuses the client of the same root
    else
      local id = vim.lsp.start_client(config)    -- Neovim 0.7
      if id then vim.lsp.buf_attach_client(args.buf, id) end
    end
  end,
})
