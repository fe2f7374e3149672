import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseServeArgs } from './serve-args.js';

describe("serve's argv without commander", () => {
  it('reads every option program.ts declares for serve, in each spelling', () => {
    expect(parseServeArgs([])).toEqual({});
    expect(
      parseServeArgs([
        '-c',
        'a.yaml',
        '--host',
        '0.0.0.0',
        '--port=9000',
        '--log-format',
        'pretty',
        '--allow-no-keys',
      ]),
    ).toEqual({ config: 'a.yaml', host: '0.0.0.0', port: '9000', logFormat: 'pretty', allowNoKeys: true });
    expect(parseServeArgs(['--config=b.yaml', '--config', 'c.yaml'])).toEqual({ config: 'c.yaml' });
  });

  it('leaves help, unknown options, arguments and odd values to commander', () => {
    for (const argv of [
      ['--help'],
      ['-h'],
      ['--prot', '1'],
      ['extra'],
      ['--port'],
      ['--port', '--host'],
      ['--port='],
      ['-c=a.yaml'],
      ['-ca.yaml'],
      ['--allow-no-keys=yes'],
    ])
      expect(parseServeArgs(argv), argv.join(' ')).toBeUndefined();
  });

  it('knows exactly the long options serve declares in program.ts', () => {
    const source = readFileSync(new URL('./program.ts', import.meta.url), 'utf8');
    const block = source.slice(source.indexOf(".command('serve')"), source.indexOf(".command('init')"));
    const declared = [...block.matchAll(/\.option\(\s*'([^']+)'/g)].map((m) => m[1]!);
    expect(declared).toEqual([
      '-c, --config <path>',
      '--host <host>',
      '--port <port>',
      '--log-format <format>',
      '--allow-no-keys',
    ]);
    for (const flags of declared) {
      const long = /--[\w-]+/.exec(flags)![0];
      const argv = flags.includes('<') ? [long, 'x'] : [long];
      expect(parseServeArgs(argv), long).not.toBeUndefined();
    }
  });
});
