import { createRequire } from 'node:module';
type Linkify = typeof import('linkifyjs');
import { scanText } from './normalize.js';

/**
 * Finding every link a reader could click in free text: what a chat app turns into a link is wider
 * than `http`/`www.`. linkifyjs (a parser made for finding links in text, with the IANA TLD list)
 * finds URLs with a scheme, bare domains on a known TLD (`evil.com/reset`, `README.md`) and e-mail
 * addresses; three small patterns add what it leaves out on purpose: schemes it does not know
 * (`javascript:`, `data:`, `vbscript:`, `slack://`, `tg://`), protocol-relative `//host/x`, and bare
 * hosts on a TLD it does not list but that some clients still link when a path follows
 * (`evil.example/reset`, `www.evil.test`, `10.0.0.1/admin`). The text is read folded (invisible
 * characters stripped, NFKC, the ideographic full stop as a dot), so `evil。com` and a link with a
 * zero-width space inside are found too; offsets are the original text's.
 */

export interface FoundLink {
  /** Offsets in the original text. */
  start: number;
  end: number;
  /** The link as folded (what a browser would open). */
  text: string;
  /** Lower-case scheme without the colon; undefined for a bare host or a protocol-relative link. */
  scheme: string | undefined;
  /** Lower-case host, when there is one. */
  host: string | undefined;
  kind: 'url' | 'email';
}

// Schemes that need no `//` and run or embed something: linkify is told about them so it finds them
// whole, wherever they appear (`click javascript:alert(1)`).
const NO_SLASH_SCHEMES = [
  'javascript',
  'vbscript',
  'data',
  'blob',
  'file',
  'about',
  'jar',
  'intent',
  'tel',
  'sms',
];
// Apps that register a handler for their scheme (a click opens them with the link's arguments).
const APP_SCHEMES = [
  'slack',
  'tg',
  'discord',
  'zoommtg',
  'msteams',
  'steam',
  'ws',
  'wss',
  'ssh',
  'sftp',
  'smb',
  'vnc',
  'rdp',
];

/**
 * linkifyjs (its parser and the IANA TLD list, about 200 KB) loads with the first text scanned for
 * links, not at start (issue 13, idle memory). Its package entry is CommonJS, so this `require` and an
 * `import 'linkifyjs'` share one instance.
 */
let loaded: Linkify | undefined;
function ensureLinkify(): Linkify {
  if (loaded) return loaded;
  const linkify = createRequire(import.meta.url)('linkifyjs') as Linkify;
  for (const s of NO_SLASH_SCHEMES) linkify.registerCustomProtocol(s, true);
  for (const s of APP_SCHEMES) linkify.registerCustomProtocol(s);
  linkify.init();
  loaded = linkify;
  return linkify;
}

/** `scheme:` that is not one linkify knows: a link whatever follows, when something does. */
const ANY_SCHEME = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{1,31}):(?:\/\/)?(?=[^\s:])[^\s<>"'`)\]}]*/g;
/** Schemes that are links even without `//` (the rest need `//` to count, so `Note: x` is prose). */
const RISKY = new Set([
  ...NO_SLASH_SCHEMES,
  'mailto',
  'http',
  'https',
  'ftp',
  'ftps',
  'view-source',
  'filesystem',
]);
/** `//host.tld/x`: a browser resolves it against the page, and some clients link it. */
const PROTOCOL_RELATIVE = /(?<![:\w/\\])\/\/(?=localhost\b|\[|[A-Za-z0-9-]+\.[A-Za-z0-9-])[^\s<>"'`)\]}]+/g;
/** An address on any TLD, or on an IP literal (linkifyjs knows only the listed TLDs). */
const EMAIL = /(?<![\w.+-])[\w.+-]+@(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|\[[0-9A-Fa-f:.]+\])/g;
/**
 * A bare host on any TLD with a path (`evil.example/reset`), a `www.` host, or an IPv4 address with a
 * path or port. Not a bare `name.ext` without a path: that is a file name in most summaries.
 */
const BARE_HOST =
  /(?<![\w@./-])(?:www\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|(?:\d{1,3}\.){3}\d{1,3}(?=[/:\\?#])|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,63}(?=\/))[^\s<>"'`)\]}]*/g;

const TRAILING = /[.,;:!?]+$/;

function parse(link: string): { scheme: string | undefined; host: string | undefined } {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(link);
  const scheme = m?.[1]?.toLowerCase();
  const candidate = scheme ? link : `http:${link.startsWith('//') ? '' : '//'}${link}`;
  try {
    const host = new URL(candidate).hostname.toLowerCase();
    return { scheme, host: host === '' ? undefined : host };
  } catch {
    return { scheme, host: undefined };
  }
}

/**
 * ASCII text none of whose characters can start or join a link: every way above needs a dot (a host
 * on a TLD, an address), a colon (a scheme), `@` (e-mail) or `//`, except linkify's bare `localhost`.
 * Such text (`tests pass`, `step 3 of 7`) skips the scan; links.test.ts checks the full scan finds
 * nothing in any text this lets through.
 */
const LINKLESS = /^[A-Za-z0-9 \t\n\r!"#$%&'()*+,\-;<=>?^_`{|}~]*$/;

export function cannotHoldLink(text: string): boolean {
  return LINKLESS.test(text) && !/localhost/i.test(text);
}

/** Every link in `text` a reader could click, in order, non-overlapping. */
export function findLinks(text: string): FoundLink[] {
  return cannotHoldLink(text) ? [] : scanLinks(text);
}

/** `findLinks` without the `cannotHoldLink` shortcut: the test that pins the shortcut compares the two. */
export function scanLinks(text: string): FoundLink[] {
  const linkify = ensureLinkify();
  const view = scanText(text);
  // IDNA maps these to "." (UTS #46); browsers and some clients do too.
  const t = view.text.replace(/[\u3002\uff61]/g, '.');
  const spans: { start: number; end: number; kind: 'url' | 'email' }[] = [];
  const taken = (s: number, e: number) => spans.some((x) => s < x.end && e > x.start);
  for (const l of linkify.find(t)) {
    if (l.type === 'url' || l.type === 'email') spans.push({ start: l.start, end: l.end, kind: l.type });
  }
  const extra = (
    re: RegExp,
    keep: (m: RegExpMatchArray) => boolean = () => true,
    kind: 'url' | 'email' = 'url',
  ) => {
    for (const m of t.matchAll(re)) {
      if (m.index === undefined || !keep(m)) continue;
      const value = m[0].replace(TRAILING, '');
      const s = m.index;
      const e = s + value.length;
      if (e <= s) continue;
      // A wider reading wins over the links inside it (`https:/evil.com` over `evil.com`).
      for (let i = spans.length - 1; i >= 0; i--) {
        if (spans[i]!.start >= s && spans[i]!.end <= e) spans.splice(i, 1);
      }
      if (!taken(s, e)) spans.push({ start: s, end: e, kind });
    }
  };
  extra(ANY_SCHEME, (m) => RISKY.has(m[1]!.toLowerCase()) || m[0].slice(m[1]!.length + 1).startsWith('//'));
  extra(PROTOCOL_RELATIVE);
  extra(BARE_HOST);
  extra(EMAIL, () => true, 'email');
  return spans
    .sort((a, b) => a.start - b.start)
    .map((s) => {
      const folded = t.slice(s.start, s.end);
      const { scheme, host } =
        s.kind === 'email'
          ? { scheme: undefined, host: folded.split('@').pop()?.toLowerCase() }
          : parse(folded);
      return {
        start: view.toOriginal(s.start),
        end: view.toOriginal(s.end, true),
        text: folded,
        scheme,
        host,
        kind: s.kind,
      };
    });
}
