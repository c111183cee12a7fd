-- Neovim's built-in LSP client (a client trainlint did not write) against `trainlint lsp`:
-- open examples/train_bad.py (copied into a temporary project), wait for diagnostics, compare
-- their codes and positions with `trainlint --format json`, apply a preferred quick fix through
-- Neovim's own workspace-edit code and check the buffer and the diagnostics that follow.
-- Run by tests/lsp/nvim/run.sh: nvim --headless -u NONE -c "luafile client_test.lua"
local function fail(msg)
  io.stderr:write('FAIL: ' .. msg .. '\n')
  vim.cmd('cquit 1')
end

local function main()
  local bin, ws = vim.env.TRAINLINT, vim.env.WORKSPACE
  local file = ws .. '/train_bad.py'
  local cli = vim.fn.json_decode(vim.fn.system({ bin, '--format', 'json', '--exit-zero', file }))
  local expected = {}
  for _, f in ipairs(cli.findings) do
    table.insert(expected, string.format('%s@%d:%d', f.code, f.range.start.line - 1, f.range.start.column - 1))
  end
  table.sort(expected)
  if #expected < 5 then return fail('the CLI found ' .. #expected .. ' findings') end

  vim.cmd('edit ' .. file)
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({ name = 'trainlint', cmd = { bin, 'lsp' }, root_dir = ws })
  if not client_id then return fail('cannot start trainlint lsp') end
  vim.lsp.buf_attach_client(bufnr, client_id)

  if not vim.wait(20000, function() return #vim.diagnostic.get(bufnr) > 0 end, 20) then
    return fail('no diagnostics within 20 s')
  end
  local diags = vim.diagnostic.get(bufnr)
  local got = {}
  for _, d in ipairs(diags) do
    if d.source ~= 'trainlint' then return fail('source is ' .. tostring(d.source)) end
    table.insert(got, string.format('%s@%d:%d', d.code, d.lnum, d.col))
  end
  table.sort(got)
  if table.concat(got, ' ') ~= table.concat(expected, ' ') then
    return fail('diagnostics differ from the CLI:\n  lsp: ' .. table.concat(got, ' ') .. '\n  cli: ' .. table.concat(expected, ' '))
  end

  local client = vim.lsp.get_client_by_id(client_id)
  for _, d in ipairs(diags) do
    -- train_bad.py is ASCII: byte columns are UTF-16 columns
    local range = { start = { line = d.lnum, character = d.col }, ['end'] = { line = d.end_lnum, character = d.end_col } }
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(bufnr) },
      range = range,
      context = { diagnostics = { { range = range, code = d.code, message = d.message, source = d.source } } },
    }
    local resp = client.request_sync('textDocument/codeAction', params, 5000, bufnr)
    for _, action in ipairs((resp and resp.result) or {}) do
      if action.isPreferred and action.edit then
        local before = #diags
        vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
        local edit = action.edit.changes[vim.uri_from_bufnr(bufnr)][1]
        local line = vim.api.nvim_buf_get_lines(bufnr, edit.range.start.line, edit.range.start.line + 1, false)[1]
        if not line:find(edit.newText, 1, true) then return fail('the buffer does not hold the fix: ' .. line) end
        local gone = vim.wait(20000, function()
          local now = vim.diagnostic.get(bufnr)
          if #now ~= before - 1 then return false end
          for _, n in ipairs(now) do
            if n.code == d.code and n.lnum == d.lnum then return false end
          end
          return true
        end, 20)
        if not gone then return fail('the fixed ' .. d.code .. ' on line ' .. (d.lnum + 1) .. ' is still reported') end
        print(string.format('ok: %d diagnostics match the CLI; applied "%s"', #got, action.title))
        vim.lsp.stop_client(client_id)
        vim.wait(2000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
        vim.cmd('qall!')
        return
      end
    end
  end
  fail('no preferred quick fix offered')
end

local ok, err = pcall(main)
if not ok then fail(tostring(err)) end
