import { Command } from 'commander';
import { fail } from './output.js';

// Subcommands load their modules lazily, so `switchboard hook` does not pay for the server's imports.
const program = new Command()
  .name('switchboard')
  .description('Self-hosted control plane between AI agents and the world.')
  .version('0.1.0')
  .showHelpAfterError('(run with --help for usage)')
  .configureOutput({ outputError: (str, write) => write(str) });

program
  .command('serve')
  .description('start the gateway (SQLite in the data dir unless SWITCHBOARD_DATABASE_URL is set)')
  .option(
    '-c, --config <path>',
    'config file (default: $SWITCHBOARD_CONFIG, else ./switchboard.yaml if present)',
  )
  .addHelpText(
    'after',
    '\nRefuses to start when the policy does not compile (the policy lint lines) or no key is usable.',
  )
  .option('--host <host>', 'listen address (overrides server.host and SWITCHBOARD_HOST)')
  .option('--port <port>', 'listen port (overrides server.port and SWITCHBOARD_PORT)')
  .option(
    '--log-format <format>',
    'json (default: one object per line, for machines) or pretty (one readable line per record); env SWITCHBOARD_LOG_FORMAT',
  )
  .option(
    '--allow-no-keys',
    'start even when no API key is usable (without it, serve refuses: every /v1 request would get 401)',
  )
  .action(async (opts) => (await import('./serve.js')).run(opts));

program
  .command('init')
  .description('write a fully commented switchboard.yaml to start from')
  .option('-o, --output <path>', 'where to write it', 'switchboard.yaml')
  .option('-f, --force', 'overwrite an existing file (key files already there are kept)')
  .option('--if-missing', 'do nothing when the file exists (npm start runs this)')
  .addHelpText(
    'after',
    '\nAlso generates the three keys it names (laptop-agent, me, ops) into owner-only files under\n./.switchboard/keys/, referenced from the config as key_file; see them with `switchboard keys list`.',
  )
  .action(async (opts) => (await import('./init.js')).run(opts));

const configCmd = program.command('config').description('the config file itself');
configCmd
  .command('schema')
  .description(
    'print the JSON Schema of switchboard.yaml, generated from the schema serve validates with (for editor completion)',
  )
  .option(
    '-o, --output <path>',
    'write it to this file instead (init writes .switchboard/switchboard.schema.json)',
  )
  .action(async (o) => {
    const { configJsonSchema } = await import('../server/config.js');
    const text = `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
    if (o.output) (await import('node:fs')).writeFileSync(o.output, text);
    else process.stdout.write(text);
  });

const serviceCmd = program
  .command('service')
  .description(
    'run the gateway as a per-user service: a systemd user unit (Linux) or a launchd agent (macOS)',
  );
serviceCmd
  .command('install')
  .description("write, enable and start the service for `serve` in this folder, with this folder's config")
  .option('--dry-run', 'print the unit (or plist) and where it would go; change nothing')
  .action(async (o) => (await import('./service.js')).install(o));
serviceCmd
  .command('uninstall')
  .description('stop, disable and remove the service')
  .action(async () => (await import('./service.js')).uninstall());
serviceCmd
  .command('status')
  .description('whether the service is installed and running, and where its logs are')
  .action(async () => (await import('./service.js')).status());

const keysCmd = program
  .command('keys')
  .description('the API keys of the config: list them, print one, rotate one kept in a key file');
keysCmd
  .command('list')
  .description('one line per key: name, role, where its secret comes from, and whether it is there')
  .option('-c, --config <path>', 'config file')
  .option('--json', 'one JSON object per line (never the secret)')
  .action(async (o) => (await import('./keys.js')).list(o));
keysCmd
  .command('show <name>')
  .description('print the key alone on stdout, e.g. SWITCHBOARD_KEY=$(switchboard keys show me)')
  .option('-c, --config <path>', 'config file')
  .action(async (name, o) => (await import('./keys.js')).show(name, o));
keysCmd
  .command('rotate <name>')
  .description('write a new secret into the key file of <name>; the gateway takes it on its next start')
  .option('-c, --config <path>', 'config file')
  .action(async (name, o) => (await import('./keys.js')).rotate(name, o));

program
  .command('doctor')
  .description(
    'check the config, the policy (as policy lint), the store, keys, channels and sources; exits 1 when something needs fixing',
  )
  .option('-c, --config <path>', 'config file')
  .action(async (opts) => (await import('./doctor.js')).run(opts));

const audit = program.command('audit').description('the hash-chained event log');
audit
  .command('verify')
  .description(
    "recompute the whole hash chain; names the first edited, deleted or reordered event (reads the gateway's store; never creates one)",
  )
  .option('-c, --config <path>', 'config file')
  .action(async (opts) => (await import('./audit.js')).verify(opts));
audit
  .command('trace <id>')
  .description(
    "intent → decision → approval → effect → receipt for an event, task, effect, delivery or touch id (reads the gateway's store)",
  )
  .option('-c, --config <path>', 'config file')
  .option('--json', 'print the trace as JSON')
  .action(async (id: string, opts) => (await import('./audit.js')).trace(id, opts));

const events = program.command('events').description('read the event log');
events
  .command('tail')
  .description(
    "print the newest events, and with --follow keep printing new ones (reads the gateway's store: run it in the gateway's folder or pass -c; never creates one)",
  )
  .option('-c, --config <path>', 'config file')
  .option('-n, --lines <n>', 'how many recent events to print first', '20')
  .option('-f, --follow', 'keep watching for new events')
  .option('--type <type>', 'only this type (a trailing .* matches a prefix, e.g. agent.tool.*)')
  .option('--task <id>', 'only events of this task')
  .option('--correlation <id>', 'only events with this correlation id')
  .option('--json', 'one JSON envelope per line')
  .action(async (opts) => (await import('./events.js')).tail(opts));

const approvalsCmd = program
  .command('approvals')
  .description('list and decide approvals (talks to the gateway at SWITCHBOARD_URL with SWITCHBOARD_KEY)');
approvalsCmd
  .command('list')
  .description('one line per approval')
  .option('--state <state>', 'pending, approved, rejected, expired or all', 'pending')
  .option('--json', 'one JSON object per line')
  .action(async (opts) => (await import('./approvals.js')).list(opts));
approvalsCmd
  .command('approve <id>')
  .description('approve an approval')
  .option('--comment <text>', 'recorded with the decision')
  .option('--json', 'print the approval as JSON')
  .action(async (id, opts) => (await import('./approvals.js')).approve(id, opts));
approvalsCmd
  .command('reject <id>')
  .description('reject an approval')
  .option('--comment <text>', 'recorded with the decision')
  .option('--json', 'print the approval as JSON')
  .action(async (id, opts) => (await import('./approvals.js')).reject(id, opts));

const tasksCmd = program
  .command('tasks')
  .description('list and stop launched tasks (talks to the gateway at SWITCHBOARD_URL with SWITCHBOARD_KEY)');
tasksCmd
  .command('list')
  .description('one line per task, newest first: id, state, owner/runtime, last change, title')
  .option('--state <state>', 'submitted, working, input-required, completed, failed, canceled or rejected')
  .option('--owner <owner>', 'only the tasks of this owner (admin keys)')
  .option('--limit <n>', 'at most this many (1–500, default 50)')
  .option('--json', 'one JSON object per line')
  .action(async (opts) => (await import('./tasks.js')).list(opts));
tasksCmd
  .command('cancel <id>')
  .description(
    'stop a running task: its whole process group gets SIGTERM, then SIGKILL after tasks.kill_grace_seconds; state canceled',
  )
  .option('--json', 'print the task as JSON')
  .action(async (id, opts) => (await import('./tasks.js')).cancel(id, opts));

program
  .command('costs')
  .description(
    'the cost ledger: turns, tool calls, wall time, tokens and cost per agent, task, session or day (admin key, SWITCHBOARD_URL)',
  )
  .option('--by <what>', 'agent, task, session or day (default agent)')
  .option('--since <when>', 'a span back (7d, 24h, 2w) or a date (2026-11-01); default 7d')
  .option('--agent <name>', 'only this agent')
  .option('--limit <n>', 'at most this many lines (1–1000, default 100)')
  .option('--json', 'print the answer as JSON')
  .action(async (opts) => (await import('./costs.js')).costs(opts));

const a2aCmd = program
  .command('a2a')
  .description('an A2A v1.0 client (the official SDK): this gateway at SWITCHBOARD_URL, or any A2A agent');
a2aCmd
  .command('card [url]')
  .description("print an agent's A2A card (default: this gateway's /.well-known/agent-card.json)")
  .option('--json', 'one line of JSON')
  .action(async (url, opts) => (await import('./a2a.js')).card(url, opts));
a2aCmd
  .command('send <url> <text>')
  .description(
    'send a message to the A2A agent at <url> and print its task (id, state, context); SWITCHBOARD_KEY is sent as a bearer when set',
  )
  .option('--push <url>', 'register this callback URL for the push notifications of the task')
  .option('--skill <id>', "the skill to run (message.metadata.skill); default the agent's only skill")
  .option('--no-wait', 'print the task once it exists instead of when it ends')
  .option('--json', 'print the task as JSON')
  .action(async (url, text, opts) => (await import('./a2a.js')).send(url, text, opts));
a2aCmd
  .command('tasks')
  .description("the A2A tasks this gateway's key may see, newest first: id, state, context")
  .option('--json', 'one JSON object per line')
  .action(async (opts) => (await import('./a2a.js')).tasks(opts));

const toolsCmd = program
  .command('tools')
  .description('the reach tool registry (talks to the gateway at SWITCHBOARD_URL with SWITCHBOARD_KEY)');
toolsCmd
  .command('list')
  .description('one line per tool: name, kind, permission, channel, timeout, description')
  .option('--json', 'one JSON object per line')
  .action(async (opts) => (await import('./reach.js')).listTools(opts));
program
  .command('touch')
  .description(
    'call a reach tool: switchboard touch ticket.query \'{"status":"open"}\' (prints the processed result)',
  )
  .argument('<tool>', 'the tool name (switchboard tools list)')
  .argument('[json]', 'the params as a JSON object', '{}')
  .option('--channel <channel>', "sync, async or stream (default: the tool's own)")
  .option(
    '--request-id <id>',
    'an idempotency key; repeat it to fetch the answer or resume after an approval',
  )
  .option('--timeout <seconds>', "shorten the tool's deadline")
  .option('--callback <channel>', 'with --channel async: push the result to this webhook channel too')
  .option('--no-wait', 'with an async touch: print the request id instead of waiting for the result')
  .option('--json', 'print the whole TouchResponse as JSON')
  .action(async (tool, json, opts) => (await import('./reach.js')).touch(tool, json, opts));

const ingress = program.command('ingress').description('webhook ingress');
ingress
  .command('replay <delivery>')
  .description(
    're-run admission under the current config for a stored delivery (new work; never reuses approvals or capabilities)',
  )
  .option('--source <name>', 'the source, when two sources stored this delivery id')
  .option('--url <url>', 'gateway URL (default $SWITCHBOARD_URL, else http://127.0.0.1:8787)')
  .option('--json', 'print the result as JSON')
  .action(async (id, opts) => {
    await (await import('./ingress.js')).replay(id, opts);
  });

program
  .command('hook')
  .description(
    'command-hook bridge: native hook JSON on stdin (Codex notify: last argument) → gateway → native reply',
  )
  .argument('<runtime>', 'claude-code, codex, hermes, openclaw, gemini-cli or cursor')
  .argument('[json...]', 'Codex notify passes its JSON as the last argument')
  .allowUnknownOption()
  .action(async (runtime, json) => (await import('./hook.js')).run(runtime, json));

program
  .command('codex-app-server')
  .description(
    "bridge between a client on stdio and `codex app-server`: passes JSON-RPC through, posts threads, turns and tool items as events, and decides the server's approval requests through the gate (and the phone)",
  )
  .option('--command <cmd>', 'the app server to spawn, split on spaces (default: "codex app-server")')
  .argument('[command...]', 'or the argv after --, e.g. -- codex app-server --listen stdio://')
  .action(async (argv, o) => (await import('./codex-app-server.js')).run(argv, o));

program
  .command('runtimes')
  .description('what each runtime lets a hook do, event by event')
  .option('--json', 'rows as JSON')
  .action(async (o) => (await import('./runtimes.js')).run(o));

const setup = program.command('setup').description('install Switchboard into an agent runtime');
setup
  .command('claude-code')
  .description(
    "merge Switchboard's hooks into Claude Code's settings.json (without clobbering what is there)",
  )
  .option('--project', 'the project settings, .claude/settings.json (default)')
  .option('--user', 'the user settings, ~/.claude/settings.json')
  .option('--local', 'the local project settings, .claude/settings.local.json')
  .option(
    '--command',
    'command hooks through `switchboard hook` (default: fails closed when the gateway is down)',
  )
  .option('--http', 'HTTP hooks straight to the gateway (Claude Code fails open when it is down)')
  .option('--url <url>', 'gateway URL (default $SWITCHBOARD_URL, else http://127.0.0.1:8787)')
  .option('--timeout <seconds>', 'hook timeout Claude Code applies')
  .option('--bridge <command>', 'the bridge command to write (default: switchboard hook claude-code)')
  .option(
    '--notify <channel>',
    "also add the MCP server and route this machine's agents to <channel>: a channel name from switchboard.yaml or an ntfy topic URL (https://ntfy.sh/<topic>)",
  )
  .option(
    '--allow-plain-http',
    'with --notify http://<LAN or loopback ntfy>/…: add its host to egress.allow (refused without it: the egress guard drops plain HTTP)',
  )
  .option('--channel-name <name>', 'with --notify <ntfy URL>: name of the channel to add (default: phone)')
  .option(
    '--agent <key name>',
    'with --notify: the agent key the route is for (repeatable; default: every agent key in auth.keys)',
    (v: string, prev: string[] = []) => [...prev, v],
  )
  .option(
    '--public-url <url>',
    "with --notify: set server.public_url, where the phone's buttons reach the gateway",
  )
  .option(
    '-c, --config <path>',
    'with --notify: the Switchboard config to edit (default: $SWITCHBOARD_CONFIG, else ./switchboard.yaml)',
  )
  .option('--dry-run', 'print the diffs and write nothing')
  .action(async (o) => {
    await (await import('./setup.js')).run(o);
  });

const dlq = program
  .command('dlq')
  .description('dead and unconfirmed deliveries (over the admin API: SWITCHBOARD_URL, SWITCHBOARD_KEY)');
dlq
  .command('list')
  .description('list deliveries by status (dead by default; reconcile = sent, outcome unknown)')
  .option('--status <status>', 'dead, reconcile, pending, claimed, unknown or succeeded', 'dead')
  .option('--destination <name>', 'only this channel')
  .option('--limit <n>', 'at most this many (≤ 1000)')
  .option('--json', 'JSON output')
  .action(async (opts) => {
    await (await import('./dlq.js')).list(opts);
  });
dlq
  .command('replay')
  .description('send dead or reconcile deliveries again under the current config')
  .option('--id <id...>', 'delivery ids (dlv_…)')
  .option('--destination <name>', 'every dead/reconcile delivery of this channel')
  .option('--from <time>', 'created at or after (ISO 8601 or epoch ms)')
  .option('--to <time>', 'created before')
  .option('--json', 'JSON output')
  .action(async (opts) => {
    await (await import('./dlq.js')).replay(opts);
  });

const outboxCmd = program
  .command('outbox')
  .description(
    "the outbox's dead letters: events a relay subscriber failed on 25 times (admin API: SWITCHBOARD_URL, SWITCHBOARD_KEY)",
  );
outboxCmd
  .command('dead')
  .description('one line per dead row: id, event, type, subscriber@version, attempts, parked at, last error')
  .option('--limit <n>', 'at most this many (≤ 1000, default 100)')
  .option('--json', 'JSON output')
  .action(async (opts) => {
    await (await import('./outbox.js')).dead(opts);
  });
outboxCmd
  .command('replay')
  .description(
    'put dead rows back for the relay (after fixing the subscriber); handled subscribers skip them',
  )
  .option('--id <id...>', 'outbox row ids (from `outbox dead`)')
  .option('--all', 'every dead row')
  .option('--json', 'JSON output')
  .action(async (opts) => {
    await (await import('./outbox.js')).replay(opts);
  });

program
  .command('mcp')
  .description('MCP server on stdio; its tools call the gateway at SWITCHBOARD_URL with SWITCHBOARD_KEY')
  .action(async () => (await import('./mcp.js')).run());

program
  .command('notify')
  .description('report_progress for scripts (POST /v1/progress with SWITCHBOARD_KEY)')
  .requiredOption('--stage <stage>', 'started|progress|blocked|awaiting_approval|done|failed')
  .requiredOption('--summary <text>', 'at most 120 characters')
  .option('--detail <text>', 'longer text')
  .option('--artifact <url>', 'a link to the result')
  .option('--severity <level>', 'info|warn|critical')
  .action(async (opts) => (await import('./notify.js')).run(opts));

const policyCmd = program
  .command('policy')
  .description('check and try the gate policy (lint and test offline, shadow on the gateway)');
policyCmd
  .command('lint')
  .description(
    'parse and compile config rules and policy files; every problem as file:line:col path: message; exit 1 if any',
  )
  .option('-c, --config <path>', 'config file')
  .action(async (o) => (await import('./policy.js')).runLint(o));
policyCmd
  .command('test <intent>')
  .description('decide one intent (a JSON file) offline and explain every matched rule')
  .option('-c, --config <path>', 'config file')
  .option('--expect <decision>', 'exit 1 unless the decision is this one')
  .action(async (f, o) => (await import('./policy.js')).runTest(f, o));
policyCmd
  .command('shadow <draft>')
  .description(
    "re-decide the gateway's recorded intents under a draft policy file and list what would change (SWITCHBOARD_URL, admin SWITCHBOARD_KEY); nothing is written",
  )
  .option('--since <window>', 'how far back: 7d, 24h, 30m or an ISO 8601 time', '7d')
  .option('--limit <n>', 'at most this many intents, the newest of the window (default 100000)')
  .option('--json', 'the report as JSON')
  .option('--url <url>', 'gateway URL')
  .action(async (f, o) => (await import('./shadow.js')).runShadow(f, o));

const incidents = program
  .command('incidents')
  .description('freeze, unfreeze, revoke (gateway at SWITCHBOARD_URL with an admin SWITCHBOARD_KEY)');
for (const verb of ['freeze', 'unfreeze'] as const) {
  incidents
    .command(verb)
    .description(
      verb === 'freeze'
        ? 'deny every high-risk intent of an agent or tenant (FROZEN_READ_ONLY)'
        : 'lift a freeze',
    )
    .option('--agent <name>', 'the agent (key name)')
    .option('--tenant <name>', 'the tenant')
    .option('--reason <text>', 'recorded in the log')
    .option('--url <url>', 'gateway URL')
    .action(async (o) => {
      await (await import('./incidents.js'))[verb](o);
    });
}
incidents
  .command('revoke')
  .description('revoke capabilities issued so far by task, agent, tenant or id')
  .option('--task <id>', 'every capability of this task')
  .option('--agent <name>', 'every capability of this agent')
  .option('--tenant <name>', 'every capability of this tenant')
  .option('--capability <id>', 'one capability')
  .option('--reason <text>', 'recorded in the log')
  .option('--url <url>', 'gateway URL')
  .action(async (o) => {
    await (await import('./incidents.js')).revoke(o);
  });
incidents
  .command('list')
  .description('current freezes and recent revocations')
  .option('--json', 'JSON output')
  .option('--url <url>', 'gateway URL')
  .action(async (o) => {
    await (await import('./incidents.js')).list(o);
  });

program
  .command('away <action>')
  .description(
    'on|off|status: whether prompts that wait for you go to your phone (SWITCHBOARD_URL, SWITCHBOARD_KEY)',
  )
  .option('--owner <name>', 'one owner instead of the tenant switch')
  .option('--json', 'JSON output')
  .action(async (action, opts) => {
    await (await import('./away.js')).run(action, opts);
  });

setup
  .command('codex')
  .description(
    "merge Switchboard's command hooks into Codex's hooks.json and set notify in ~/.codex/config.toml",
  )
  .option('--user', 'the user files, ~/.codex/hooks.json and ~/.codex/config.toml (default)')
  .option('--project', 'the project hooks, .codex/hooks.json (notify is not set)')
  .option('--bridge <command>', 'the bridge command to write (default: switchboard hook codex)')
  .option('--dry-run', 'print the diffs and write nothing')
  .action(async (o) => {
    const outcome = await (await import('./setup-codex.js')).run(o);
    if (outcome.notify.kind === 'conflict') process.exitCode = 1;
  });

program.parseAsync(process.argv).catch(fail);
