export declare function temporaryName(target: string): string;
export declare function writeFileAtomic(target: string, data: string | Uint8Array): Promise<void>;
export declare function writeFileAtomicSync(target: string, data: string | Uint8Array): void;
export declare function moveIntoPlace(temporary: string, target: string): void;
