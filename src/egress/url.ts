import { z } from 'zod';

/**
 * A URL Switchboard will post to, as a config key: absolute, http or https, and without user info
 * (`https://user:pw@host/` — a password in a config file, and the classic `https://good.example@evil/`
 * disguise). The same rules as `checkUrlStatic`'s first steps, so a literal URL the guard would refuse
 * for its scheme or its credentials fails at config load, not at the first attempt. Addresses and
 * ports depend on `egress.allow` and DNS; `doctor` and the start-up warning judge those.
 */
export const outboundUrl = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http:// or https:// URL' })
  .refine(
    (u) => {
      try {
        const url = new URL(u);
        return url.username === '' && url.password === '';
      } catch {
        return false;
      }
    },
    { message: 'must not carry user info (user:password@); put credentials in an *_env key' },
  );
