import { Ajv, type ValidateFunction } from 'ajv';

/**
 * Input schemas of tools whose shape we know (Claude Code's documented `tool_input`, which Codex
 * shares for `Bash`). A `modify` rule may only produce input that validates here; for a tool with no
 * known schema, modify fails closed. `additionalProperties` stays open: runtimes add fields across
 * versions, and the runtime, not the gate, owns the full schema; the gate checks the fields it knows.
 */
export const KNOWN_TOOL_SCHEMAS: Record<string, Record<string, unknown>> = {
  Bash: {
    type: 'object',
    required: ['command'],
    properties: {
      command: { type: 'string', minLength: 1 },
      description: { type: 'string' },
      timeout: { type: 'integer', minimum: 0, maximum: 600_000 },
      run_in_background: { type: 'boolean' },
    },
  },
  Write: {
    type: 'object',
    required: ['file_path', 'content'],
    properties: { file_path: { type: 'string', minLength: 1 }, content: { type: 'string' } },
  },
  Edit: {
    type: 'object',
    required: ['file_path', 'old_string', 'new_string'],
    properties: {
      file_path: { type: 'string', minLength: 1 },
      old_string: { type: 'string' },
      new_string: { type: 'string' },
      replace_all: { type: 'boolean' },
    },
  },
  Read: {
    type: 'object',
    required: ['file_path'],
    properties: {
      file_path: { type: 'string', minLength: 1 },
      offset: { type: 'integer', minimum: 0 },
      limit: { type: 'integer', minimum: 1 },
    },
  },
  WebFetch: {
    type: 'object',
    required: ['url', 'prompt'],
    properties: { url: { type: 'string', minLength: 1 }, prompt: { type: 'string' } },
  },
};

export type SchemaCheck = { kind: 'valid' } | { kind: 'invalid'; errors: string[] } | { kind: 'unknown' };
export type ToolSchemaRegistry = (tool: string, input: unknown) => SchemaCheck;

export type RegistryBuild = { ok: true; check: ToolSchemaRegistry } | { ok: false; errors: string[] };

/**
 * Compiles the configured schemas once per policy revision (a broken one is a policy error); the
 * known ones, which always compile, on their tool's first check: only a `modify` rule checks, so a
 * policy without one compiles none of them (issue 13, idle memory). Configured wins over known.
 */
export function buildToolSchemas(extra: Record<string, Record<string, unknown>>): RegistryBuild {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validators = new Map<string, ValidateFunction>();
  const errors: string[] = [];
  for (const [tool, schema] of Object.entries(extra)) {
    try {
      validators.set(tool, ajv.compile(schema));
    } catch (err) {
      errors.push(`tool_schemas.${tool}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  const validator = (tool: string): ValidateFunction | undefined => {
    const compiled = validators.get(tool);
    if (compiled || !Object.hasOwn(KNOWN_TOOL_SCHEMAS, tool)) return compiled;
    const known = ajv.compile(KNOWN_TOOL_SCHEMAS[tool] as Record<string, unknown>);
    validators.set(tool, known);
    return known;
  };
  return {
    ok: true,
    check(tool, input) {
      const validate = validator(tool);
      if (!validate) return { kind: 'unknown' };
      if (validate(input)) return { kind: 'valid' };
      const found = (validate.errors ?? []).map(
        (e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`,
      );
      return { kind: 'invalid', errors: found };
    },
  };
}
