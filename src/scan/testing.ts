import type { SecretKind } from './secrets.js';

// Built from pieces so the repository itself never holds a token-shaped string a scanner would flag.
export const j = (...parts: string[]) => parts.join('');
/** One or more samples per kind, each embedded in a line of text by the tests that use it. */
export const SECRET_SAMPLES: [SecretKind, string][] = [
  ['aws_access_key', j('AKIA', 'IOSFODNN7', 'EXAMPLE')],
  ['gcp_api_key', j('AIza', 'SyA-1234567890abcdefghijklmnopqrstu')],
  ['gcp_service_account', j('"private_key_id": "', 'a'.repeat(40), '"')],
  ['azure_key', j('AccountKey=', 'A'.repeat(30), 'b'.repeat(30), '==')],
  ['github_token', j('ghp_', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8')],
  ['github_token', j('gho_', 'z'.repeat(36))],
  ['github_token', j('ghs_', 'Y'.repeat(36))],
  ['github_token', j('github_pat_', '11ABCDEFG0', 'x'.repeat(30))],
  ['slack_token', j('xoxb-', '123456789012-', '1234567890123-abcdefghijklmnop')],
  ['slack_token', j('xoxp-', '1234567890-abcdef')],
  ['openai_key', j('sk-', 'abcdefghijklmnopqrstuvwxyz012345')],
  ['openai_key', j('sk-proj-', 'abcdefghijklmnopqrstuvwxyz_0123')],
  ['anthropic_key', j('sk-ant-', 'api03-', 'abcdefghijklmnopqrstuvwxyz')],
  ['private_key', j('-----BEGIN RSA ', 'PRIVATE KEY-----\nMIIEow\n-----END RSA ', 'PRIVATE KEY-----')],
  ['private_key', j('-----BEGIN OPENSSH ', 'PRIVATE KEY-----\nb3BlbnNz')],
  [
    'jwt',
    j('eyJhbGciOiJIUzI1NiJ9', '.eyJzdWIiOiIxMjM0NTY3ODkwIn0', '.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'),
  ],
  ['password_assignment', 'db password=hunter2xyz'],
  ['password_assignment', 'secret: s3cr3t-value'],
  ['bearer_token', j('Authorization: Bearer ', 'aZ3kP9qL2mX7vR4tY8wN1bC6')],
];
