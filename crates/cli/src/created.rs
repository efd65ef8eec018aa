//! Undoing a command's partial output.

use std::path::{Path, PathBuf};

/// What a command has put on disk so far, removed if it fails (`argus share`, `argus iris gen`).
#[derive(Default)]
pub struct Created {
    /// Directories, outermost first.
    pub dirs: Vec<PathBuf>,
    /// Files written.
    pub files: Vec<PathBuf>,
}

impl Created {
    /// Creates `dir` and its missing parents, remembering which were missing.
    pub fn dir_all(&mut self, dir: &Path) -> Result<(), String> {
        let mut missing: Vec<PathBuf> =
            dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).map(Path::to_path_buf).collect();
        missing.reverse();
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        self.dirs.extend(missing);
        Ok(())
    }

    /// Removes the files, then the directories that are left empty.
    pub fn undo(&self) {
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
        // Innermost first; remove_dir leaves a directory someone else put files into.
        for d in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}
