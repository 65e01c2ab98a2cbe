export type { ArchiveCheckOptions, ArchiveRule, ArchiveSummary } from './archive-check.js';
export { checkArchive } from './archive-check.js';
export type { DockerFilesOptions, FilesContainer } from './docker-files.js';
export { DockerFiles } from './docker-files.js';
export type { ComputerFiles, FileErrorReason, FileStat, FileType, WriteOptions } from './driver.js';
export {
  DEFAULT_FILES_MAX_BYTES,
  DEFAULT_MAX_ARCHIVE_ENTRIES,
  DEFAULT_QUOTA_BYTES,
  FileError,
  WRITABLE_ROOT,
} from './driver.js';
export { isWritablePath, MAX_PATH_BYTES, normalizeComputerPath } from './paths.js';
export type { SimulatedFilesOptions } from './simulated-files.js';
export { SimulatedFiles } from './simulated-files.js';
