import { InvalidInput } from '../errors';
import { cleanText } from '../text';

// A JSON reader that takes its text in pieces and never holds the whole document: the containers it is
// told to split hand out their members one by one as each ends, and keep none of them. Every other value
// is built as JSON.parse would build it (its strings cleaned of what PostgreSQL cannot store, as
// parseCleanJson does), within a bound: at most `maxValueChars` characters are read between two members
// handed out, so what is kept at once is bounded whatever the document. An uploaded archive is read with
// it, in the import's job (docs/moving.md).

/** Where a value is: the keys and indexes from the document's top. */
export type JsonPath = readonly (string | number)[];

export type JsonReaderOptions = {
  /** Whether the container at this path is split: its members are handed out, not kept in it. */
  split: (path: JsonPath) => boolean;
  /** The most characters read between two members handed out (what a kept value may span). */
  maxValueChars: number;
  /** What the document is, for the refusals ("subscriptions.json"). */
  name: string;
  /** Told when a split container begins (a split container is never handed out itself). */
  opened?: (path: JsonPath, array: boolean) => void;
};

/** A value handed out: its path, and the nearest container around it that is kept (as read so far). */
export type OnValue = (path: JsonPath, value: unknown, within: unknown) => void;

/** The text is not JSON: the reader's caller says so in its own words. */
export class NotJson extends Error {}

/** How deep containers may nest: far more than any archive, far less than a stack of frames could take. */
const MAX_DEPTH = 64;

type Frame = {
  path: (string | number)[];
  array: boolean;
  /** The container being built; undefined when it is split. */
  kept: unknown[] | Record<string, unknown> | undefined;
  key: string | number;
  state: 'first' | 'key' | 'colon' | 'value' | 'comma';
};

/** What a split container gives its parent when it ends: nothing to keep. */
const SPLIT = Symbol('split');

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const LITERALS: Record<string, unknown> = { true: true, false: false, null: null };
const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
/** What a number or literal may hold: digits, a-z, E (an exponent may be upper case), - + and '.'. */
const isWordChar = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || c === 69 || c === 45 || c === 43 || c === 46;

export class JsonReader {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly frames: Frame[] = [];
  private mode: 'none' | 'string' | 'escape' | 'unicode' | 'word' = 'none';
  private text: string[] = [];
  private word = '';
  private done = false;
  /** Where the last member was handed out (or a split container began). */
  private lastOut = 0;
  private at = 0;
  /** What the document's top is, once it began. */
  top: 'array' | 'object' | 'scalar' | undefined;

  constructor(
    private readonly options: JsonReaderOptions,
    private readonly onValue: OnValue,
  ) {}

  /** Reads the next bytes of the document (UTF-8; a character split between two pieces is joined). */
  write(bytes: Uint8Array): void {
    this.read(this.decoder.decode(bytes, { stream: true }));
  }

  /** The document ended: a value cut short is refused. */
  end(): void {
    this.read(this.decoder.decode());
    if (this.mode === 'word') this.endWord();
    if (this.mode !== 'none' || !this.done) throw this.notJson('it ends too early');
  }

  private read(s: string): void {
    let i = 0;
    while (i < s.length) {
      if (this.mode === 'string') i = this.stringPart(s, i);
      else if (this.mode === 'escape') i = this.escape(s, i);
      else if (this.mode === 'unicode') i = this.unicode(s, i);
      else if (this.mode === 'word') i = this.wordPart(s, i);
      else i = this.between(s, i);
    }
    this.at += s.length;
    this.checkSize(0);
  }

  /** Refuses a kept value that spans more than the bound, at position `i` of the piece being read. */
  private checkSize(i: number): void {
    if (this.at + i - this.lastOut > this.options.maxValueChars) {
      throw new InvalidInput(
        `${this.options.name} holds a value larger than castsync reads (over ${this.options.maxValueChars} characters)`,
      );
    }
  }

  private notJson(why: string, at?: number): NotJson {
    return new NotJson(`${this.options.name} is not JSON: ${why}${at === undefined ? '' : ` (at ${this.at + at})`}`);
  }

  /** Between tokens: white space, punctuation, or the start of a string, number or literal. */
  private between(s: string, i: number): number {
    const c = s.charCodeAt(i);
    if (isSpace(c)) return i + 1;
    if (this.done) throw this.notJson('more follows its end', i);
    const ch = s[i]!;
    if (ch === '"') {
      this.mode = 'string';
      this.text = [];
      return i + 1;
    }
    if (ch === '{' || ch === '[') this.open(ch === '[', i);
    else if (ch === '}' || ch === ']') this.close(ch === ']', i);
    else if (ch === ':') this.punctuation('colon', 'value', i);
    else if (ch === ',') this.punctuation('comma', this.frames.at(-1)?.array ? 'value' : 'key', i);
    else if (isWordChar(c)) {
      this.mode = 'word';
      this.word = '';
      return i;
    } else throw this.notJson(`unexpected ${JSON.stringify(ch)}`, i);
    return i + 1;
  }

  private punctuation(expected: Frame['state'], next: Frame['state'], i: number): void {
    const f = this.frames.at(-1);
    if (!f || f.state !== expected) throw this.notJson('misplaced punctuation', i);
    f.state = next;
  }

  /** Where the next value goes, checking that a value may come here. */
  private slot(i: number): { f: Frame | undefined; path: (string | number)[] } {
    const f = this.frames.at(-1);
    if (!f) return { f, path: [] };
    const wants = f.array ? f.state === 'first' || f.state === 'value' : f.state === 'value';
    if (!wants) throw this.notJson('a value where none may be', i);
    return { f, path: [...f.path, f.key] };
  }

  private open(array: boolean, i: number): void {
    const { path } = this.slot(i);
    if (this.frames.length >= MAX_DEPTH) throw this.notJson(`nested more than ${MAX_DEPTH} deep`, i);
    if (this.frames.length === 0) this.top = array ? 'array' : 'object';
    const split = this.options.split(path);
    if (split) {
      this.lastOut = this.at + i;
      this.options.opened?.(path, array);
    }
    this.frames.push({ path, array, kept: split ? undefined : array ? [] : {}, key: 0, state: 'first' });
  }

  private close(array: boolean, i: number): void {
    const f = this.frames.at(-1);
    const may = f?.state === 'first' || f?.state === 'comma';
    if (!f || f.array !== array || !may) throw this.notJson(`misplaced ${array ? ']' : '}'}`, i);
    this.frames.pop();
    this.value(f.kept ?? SPLIT, i);
  }

  /** A value ended: kept in its container, or handed out if the container is split. */
  private value(v: unknown, i: number): void {
    const { f, path } = this.slot(i);
    if (!f) {
      this.done = true;
      this.top ??= 'scalar';
      if (v !== SPLIT) this.handOut(path, v, undefined, i);
      return;
    }
    if (v !== SPLIT) {
      if (!f.kept) this.handOut(path, v, this.keptAround(), i);
      else if (Array.isArray(f.kept)) f.kept.push(v);
      // As JSON.parse does: "__proto__" is a key like any other.
      else Object.defineProperty(f.kept, f.key, { value: v, enumerable: true, writable: true, configurable: true });
    }
    if (f.array) f.key = (f.key as number) + 1;
    f.state = 'comma';
  }

  /** The nearest container being kept, around the one being read. */
  private keptAround(): unknown {
    for (let i = this.frames.length - 1; i >= 0; i--) if (this.frames[i]!.kept) return this.frames[i]!.kept;
    return undefined;
  }

  private handOut(path: JsonPath, v: unknown, within: unknown, i: number): void {
    this.checkSize(i);
    this.lastOut = this.at + i;
    this.onValue(path, v, within);
  }

  /** A string ended: a key where a key is wanted, else a value. */
  private endString(i: number): void {
    this.mode = 'none';
    const s = cleanText(this.text.join(''));
    this.text = [];
    const f = this.frames.at(-1);
    if (f && !f.array && (f.state === 'first' || f.state === 'key')) {
      f.key = s;
      f.state = 'colon';
    } else this.value(s, i);
  }

  private stringPart(s: string, i: number): number {
    let j = i;
    let c = 0;
    while (j < s.length) {
      c = s.charCodeAt(j);
      if (c === 34 || c === 92 || c < 32) break;
      j++;
    }
    if (j > i) this.text.push(s.slice(i, j));
    if (j === s.length) return j;
    if (c === 34) this.endString(j);
    else if (c === 92) this.mode = 'escape';
    else throw this.notJson('a control character in a string', j);
    return j + 1;
  }

  private escape(s: string, i: number): number {
    const ch = s[i]!;
    if (ch === 'u') {
      this.mode = 'unicode';
      this.word = '';
    } else {
      const meant = ESCAPES[ch];
      if (meant === undefined) throw this.notJson(`an unknown escape \\${ch}`, i);
      this.text.push(meant);
      this.mode = 'string';
    }
    return i + 1;
  }

  private unicode(s: string, i: number): number {
    this.word += s[i];
    if (!/^[0-9a-fA-F]*$/.test(this.word)) throw this.notJson('a broken \\u escape', i);
    if (this.word.length === 4) {
      this.text.push(String.fromCharCode(parseInt(this.word, 16)));
      this.mode = 'string';
    }
    return i + 1;
  }

  /** A number or true, false, null: read to its end. */
  private wordPart(s: string, i: number): number {
    let j = i;
    while (j < s.length && isWordChar(s.charCodeAt(j))) j++;
    this.word += s.slice(i, j);
    if (this.word.length > 400) throw this.notJson('a number or word too long', i);
    if (j < s.length) this.endWord(j);
    return j;
  }

  private endWord(i = 0): void {
    this.mode = 'none';
    const w = this.word;
    if (Object.hasOwn(LITERALS, w)) this.value(LITERALS[w], i);
    else if (NUMBER.test(w)) this.value(Number(w), i);
    else throw this.notJson(`unexpected ${JSON.stringify(w.slice(0, 20))}`, i);
  }
}

/**
 * Reads a document given in pieces with a JsonReader; what `onValue` puts in `ready` is handed on in
 * batches of `size` as they fill (the rest stays in `ready` for the caller). Returns the reader (its `top`).
 */
export async function* readJson(
  pieces: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: JsonReaderOptions,
  onValue: OnValue,
  ready: unknown[] = [],
  size = Infinity,
): AsyncGenerator<unknown[], JsonReader> {
  const reader = new JsonReader(options, onValue);
  for await (const piece of pieces) {
    reader.write(piece);
    while (ready.length >= size) yield ready.splice(0, size);
  }
  reader.end();
  return reader;
}

/** Runs a generator to its end, dropping what it yields: what it returns. */
export async function drain<R>(g: AsyncGenerator<unknown, R>): Promise<R> {
  for (;;) {
    const next = await g.next();
    if (next.done) return next.value;
  }
}
