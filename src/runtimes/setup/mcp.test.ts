import { describe, expect, it } from 'vitest';
import { mcpCommand, mcpConfigLocation, mcpServerEntry, mergeMcpServer } from './mcp.js';

const where = { cwd: '/src/app', home: '/home/me' };
const KEY_REF = `\${SWITCHBOARD_KEY}`;

describe('mcpConfigLocation', () => {
  it('names .mcp.json for a project, and ~/.claude.json at the top or under the project otherwise', () => {
    expect(mcpConfigLocation('project', where)).toEqual({ path: '/src/app/.mcp.json', at: ['mcpServers'] });
    expect(mcpConfigLocation('user', where)).toEqual({ path: '/home/me/.claude.json', at: ['mcpServers'] });
    expect(mcpConfigLocation('local', where)).toEqual({
      path: '/home/me/.claude.json',
      at: ['projects', '/src/app', 'mcpServers'],
    });
  });
});

describe('mcpServerEntry', () => {
  it('names the key by reference in .mcp.json and leaves it to the environment elsewhere', () => {
    expect(mcpServerEntry('project', { url: 'http://127.0.0.1:8787' })).toEqual({
      command: 'switchboard',
      args: ['mcp'],
      env: { SWITCHBOARD_URL: 'http://127.0.0.1:8787', SWITCHBOARD_KEY: KEY_REF },
    });
    expect(mcpServerEntry('user', { url: 'http://h:1' }).env).toEqual({ SWITCHBOARD_URL: 'http://h:1' });
  });

  it('runs the MCP server the way a custom bridge runs, unless the bridge needs a shell', () => {
    expect(mcpCommand('node /opt/sb/dist/cli/main.js hook claude-code')).toEqual({
      command: 'node',
      args: ['/opt/sb/dist/cli/main.js', 'mcp'],
    });
    expect(mcpCommand('switchboard hook claude-code')).toEqual({ command: 'switchboard', args: ['mcp'] });
    expect(mcpCommand('SB=1 "$HOME/sb" hook claude-code')).toEqual({ command: 'switchboard', args: ['mcp'] });
    expect(mcpCommand('./my-wrapper.sh')).toEqual({ command: 'switchboard', args: ['mcp'] });
  });
});

describe('mergeMcpServer', () => {
  const entry = mcpServerEntry('project', { url: 'http://127.0.0.1:8787' });

  it('adds the server beside the others and changes nothing the second time', () => {
    const file = { mcpServers: { github: { command: 'gh-mcp' } }, other: true };
    const once = mergeMcpServer(file, ['mcpServers'], entry);
    if (once.kind !== 'ok') throw new Error(once.problem);
    expect(once.changed).toBe(true);
    expect(once.config).toEqual({
      mcpServers: { github: { command: 'gh-mcp' }, switchboard: entry },
      other: true,
    });
    expect(file.mcpServers).not.toHaveProperty('switchboard');
    const twice = mergeMcpServer(once.config, ['mcpServers'], entry);
    expect(twice.kind === 'ok' && twice.changed).toBe(false);
  });

  it('updates its own stdio entry and keeps what the user added to it', () => {
    const file = {
      mcpServers: {
        switchboard: { type: 'stdio', command: 'old', args: [], env: { SWITCHBOARD_TASK_ID: 't' } },
      },
    };
    const merged = mergeMcpServer(file, ['mcpServers'], entry);
    expect(merged.kind === 'ok' && merged.config.mcpServers).toEqual({
      switchboard: {
        type: 'stdio',
        command: 'switchboard',
        args: ['mcp'],
        env: { SWITCHBOARD_TASK_ID: 't', SWITCHBOARD_URL: 'http://127.0.0.1:8787', SWITCHBOARD_KEY: KEY_REF },
      },
    });
  });

  it('leaves an HTTP switchboard entry alone, with a warning', () => {
    const file = { mcpServers: { switchboard: { type: 'http', url: 'http://127.0.0.1:8787/mcp' } } };
    const merged = mergeMcpServer(file, ['mcpServers'], entry);
    expect(merged.kind === 'ok' && merged.changed).toBe(false);
    expect(merged.kind === 'ok' && merged.warnings[0]).toMatch(/is a http server; left as it is/);
  });

  it('refuses files of the wrong shape', () => {
    expect(mergeMcpServer([], ['mcpServers'], entry)).toMatchObject({ kind: 'invalid' });
    expect(mergeMcpServer({ mcpServers: [] }, ['mcpServers'], entry)).toEqual({
      kind: 'invalid',
      problem: '"mcpServers" is not an object',
    });
    expect(mergeMcpServer({ projects: { '/a': 1 } }, ['projects', '/a', 'mcpServers'], entry)).toEqual({
      kind: 'invalid',
      problem: '"projects./a" is not an object',
    });
  });
});
