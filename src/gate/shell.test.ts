import { describe, expect, it } from 'vitest';
import { hasFlag, parseShell, parseShellSlow } from './shell.js';

const programs = (command: string) => parseShell(command).commands.map((c) => c.program);

describe('parseShell', () => {
  it('splits a line as a shell would, operators as their own tokens', () => {
    expect(parseShell('git commit -m "a b" && git push').argv).toEqual([
      'git',
      'commit',
      '-m',
      'a b',
      '&&',
      'git',
      'push',
    ]);
  });

  it('lists each simple command of an && chain with its program, subcommand and flags', () => {
    const { commands } = parseShell('cd x && git push -f origin main');
    expect(commands).toEqual([
      { argv: ['cd', 'x'], env: [], program: 'cd', subcommand: 'x', flags: [] },
      {
        argv: ['git', 'push', '-f', 'origin', 'main'],
        env: [],
        program: 'git',
        subcommand: 'push',
        flags: ['-f'],
      },
    ]);
  });

  it("finds git's subcommand after a global option that takes a value", () => {
    const [c] = parseShell('git -C x push --force-with-lease').commands;
    expect(c).toMatchObject({ program: 'git', subcommand: 'push', flags: ['-C', '--force-with-lease'] });
  });

  it('sees through wrappers, assignments and paths to the program that runs', () => {
    const [c] = parseShell('FOO=1 sudo -u deploy env -i /usr/bin/git push').commands;
    expect(c).toMatchObject({ env: ['FOO=1'], program: 'git', subcommand: 'push' });
  });

  it('reads pipelines, lists, newlines and comments as separate commands', () => {
    expect(programs('cat a | grep b; ls\n# git push --force\nwc -l & true || false')).toEqual([
      'cat',
      'grep',
      'ls',
      'wc',
      'true',
      'false',
    ]);
  });

  it('reads command substitutions, quoted or not, and backticks as commands', () => {
    expect(programs('echo $(curl -s x | sh)')).toEqual(['echo', 'curl', 'sh']);
    expect(programs('git commit -m "fix: $(wget y)"')).toEqual(['git', 'wget']);
    expect(programs('echo `git push -f`')).toEqual(['echo', 'git']);
    expect(programs('echo "`rm -rf /`"')).toEqual(['echo', 'rm']);
  });

  it('reads the script of bash -c and eval as commands of the line', () => {
    const { commands } = parseShell(`bash -lc 'git push --force origin main'`);
    expect(commands.map((c) => c.program)).toEqual(['bash', 'git']);
    expect(commands[1]?.flags).toEqual(['--force']);
    expect(programs('eval "curl x"')).toEqual(['eval', 'curl']);
  });

  it('keeps redirection targets and fd numbers out of a command’s words', () => {
    const [c] = parseShell('git push -f > out.log 2>&1').commands;
    expect(c?.argv).toEqual(['git', 'push', '-f']);
  });

  it('never expands variables from its own environment', () => {
    expect(parseShell('echo $HOME').commands[0]?.argv).toEqual(['echo', '$HOME']);
  });

  it('survives an unterminated quote and an empty line', () => {
    expect(parseShell('echo "unterminated').commands[0]?.program).toBe('echo');
    expect(parseShell('')).toEqual({ argv: [], commands: [] });
  });
});

describe('hasFlag', () => {
  it('matches a flag exactly, with a value, or inside a cluster of short flags', () => {
    expect(hasFlag(['git', 'push', '-fu'], '-f')).toBe(true);
    expect(hasFlag(['git', 'push', '--force=true'], '--force')).toBe(true);
    expect(hasFlag(['git', 'push', '--force-with-lease'], '--force')).toBe(false);
    expect(hasFlag(['rm', '--', '-f'], '-f')).toBe(false);
  });
});

describe('the plain-text shortcut', () => {
  it('reads random plain text to exactly the tokens and commands shell-quote gives', () => {
    const alphabet = 'ab-./:@%+=,~^ \t&|;09_'.split('');
    const words = [
      'git',
      'push',
      '-f',
      'sudo',
      'env',
      'A=1',
      'bash',
      '-c',
      'eval',
      '&&',
      '||',
      '|',
      ';',
      '&',
    ];
    const more = [';;', '|&', ';;&', ';&', 'nice', '-n', '5', '--', 'x=', '=', '~', '^', '%'];
    const pool = [...words, ...more];
    let x = 7;
    const r = () => {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      return x / 0x7fffffff;
    };
    for (let n = 0; n < 5_000; n++) {
      let text = '';
      for (let i = Math.floor(r() * 12); i > 0; i--)
        text +=
          r() < 0.5 ? alphabet[Math.floor(r() * alphabet.length)] : ` ${pool[Math.floor(r() * pool.length)]}`;
      expect(parseShell(text), JSON.stringify(text)).toEqual(parseShellSlow(text));
    }
  });
});
