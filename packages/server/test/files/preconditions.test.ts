import { expect, test } from 'vitest';
import { FileError } from '../../src/computers/files/driver.js';
import {
  assertDirectory,
  assertExists,
  assertLinkHops,
  assertParentsMade,
  assertRegularFile,
  assertRemovable,
  assertReplaceable,
  assertWithinQuota,
  assertWriteAncestor,
  checkWriteRequest,
  MAX_SYMLINK_HOPS,
  quotaLeft,
} from '../../src/computers/files/preconditions.js';

/** What `check` throws, as the published parts of a `FileError`; `undefined` when it passes. */
function refusal(check: () => void) {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(FileError);
    const { reason, message, details } = error as FileError;
    return { reason, message, details };
  }
  return undefined;
}

// One row per rule and outcome: the error each driver answers is the one written here.
test.each([
  [
    'a write outside /home',
    { given: () => checkWriteRequest('/etc/x', { maxBytes: 10 }) },
    { reason: 'read_only', message: 'only /home and below can be written', details: { path: '/etc/x' } },
  ],
  [
    'a write declared over the limit',
    { given: () => checkWriteRequest('/home/svc/x', { size: 11, maxBytes: 10 }) },
    { reason: 'too_large', message: 'the request is over the limit of 10 bytes', details: { limit: 10 } },
  ],
  [
    'a write at the limit',
    { given: () => checkWriteRequest('/home/svc/x', { size: 10, maxBytes: 10 }) },
    undefined,
  ],
  [
    'a missing path',
    { given: () => assertExists(undefined, '/home/svc/nope') },
    { reason: 'not_found', message: '/home/svc/nope does not exist', details: { path: '/home/svc/nope' } },
  ],
  [
    'a read of a directory',
    { given: () => assertRegularFile('/home/svc', 'directory') },
    { reason: 'is_directory', message: '/home/svc is a directory', details: { path: '/home/svc' } },
  ],
  [
    'a read of a FIFO',
    { given: () => assertRegularFile('/home/svc/fifo', 'other') },
    {
      reason: 'special_file',
      message: '/home/svc/fifo is a device, FIFO or socket: it is never read or written',
      details: { path: '/home/svc/fifo' },
    },
  ],
  [
    'a listing of a file',
    { given: () => assertDirectory('/home/svc/a.txt', 'file') },
    {
      reason: 'not_directory',
      message: '/home/svc/a.txt is not a directory',
      details: { path: '/home/svc/a.txt' },
    },
  ],
  [
    'a write over a directory',
    { given: () => assertReplaceable('/home/svc/sub', 'directory') },
    { reason: 'is_directory', message: '/home/svc/sub is a directory', details: { path: '/home/svc/sub' } },
  ],
  ['a write over a symlink', { given: () => assertReplaceable('/home/svc/link', 'symlink') }, undefined],
  ['a new file', { given: () => assertReplaceable('/home/svc/new', undefined) }, undefined],
  [
    'a write whose nearest directory is a file',
    { given: () => assertWriteAncestor('/home/svc/a.txt', 'file', '/home/svc/a.txt') },
    {
      reason: 'not_directory',
      message: '/home/svc/a.txt is not a directory',
      details: { path: '/home/svc/a.txt' },
    },
  ],
  [
    'a write through a symlink out of /home',
    { given: () => assertWriteAncestor('/home/svc/out', 'directory', '/etc') },
    { reason: 'read_only', message: 'only /home and below can be written', details: { path: '/etc' } },
  ],
  [
    'a missing parent without parents',
    { given: () => assertParentsMade('/home/svc/x/y', 1, false) },
    { reason: 'not_found', message: '/home/svc/x/y does not exist', details: { path: '/home/svc/x/y' } },
  ],
  ['a missing parent with parents', { given: () => assertParentsMade('/home/svc/x/y', 1, true) }, undefined],
  [
    'bytes past the quota',
    { given: () => assertWithinQuota(90, 11, 100) },
    {
      reason: 'quota_exceeded',
      message: "the computer's files would exceed their quota of 100 bytes",
      details: { quota: 'files_bytes', limit: 100 },
    },
  ],
  ['bytes up to the quota', { given: () => assertWithinQuota(90, 10, 100) }, undefined],
  [
    'a removal of /home',
    { given: () => assertRemovable('/home') },
    { reason: 'read_only', message: '/home itself cannot be removed', details: { path: '/home' } },
  ],
  [
    'a removal outside /home',
    { given: () => assertRemovable('/etc/hostname') },
    {
      reason: 'read_only',
      message: 'only /home and below can be written',
      details: { path: '/etc/hostname' },
    },
  ],
  [
    'one symlink too many',
    { given: () => assertLinkHops(MAX_SYMLINK_HOPS + 1, '/home/svc/loop') },
    {
      reason: 'not_found',
      message: '/home/svc/loop: too many levels of symbolic links',
      details: { path: '/home/svc/loop' },
    },
  ],
  [
    'the last symlink allowed',
    { given: () => assertLinkHops(MAX_SYMLINK_HOPS, '/home/svc/loop') },
    undefined,
  ],
])('%s', (_name, { given }, want) => {
  expect(refusal(given)).toEqual(want);
});

test('an archive has the quota left, never below nothing', () => {
  expect(quotaLeft(30, 100)).toEqual({ left: 70, limit: 100 });
  expect(quotaLeft(130, 100)).toEqual({ left: 0, limit: 100 });
});
