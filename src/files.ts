import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes a file whole or not at all, readable by its owner only, and on the disk before it returns: a
 * temporary file beside it, flushed, renamed over it, and the folder flushed so that the rename lasts.
 * A failure leaves the file as it was (and no temporary file).
 */
export async function writeFileDurably(file: string, text: string): Promise<void> {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    const handle = await fs.open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    await fs.rm(temporary, { force: true }).catch(() => undefined);
    throw err;
  }
  await renameDurably(temporary, file);
}

/**
 * Puts a complete temporary file in the place of `file`, on the disk before it returns: the file flushed,
 * renamed over `file`, and the folder flushed so that the rename lasts (a power cut after a rename that is
 * not flushed can leave `file` empty). A failure removes the temporary file.
 */
export async function renameDurably(temporary: string, file: string): Promise<void> {
  try {
    const handle = await fs.open(temporary, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, file);
  } catch (err) {
    await fs.rm(temporary, { force: true }).catch(() => undefined);
    throw err;
  }
  const folder = await fs.open(path.dirname(file), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
