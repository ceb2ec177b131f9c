// Package slurm submits jeirt's job arrays to a Slurm cluster and follows
// them: the array of a job folder (a sweep's runs, an encoding's shards)
// submitted with sbatch --parsable, the job ids recorded in the folder
// (slurm.json), each task's state from scontrol (sacct where accounting
// runs) and the task's own files, and the failed or missing tasks submitted
// again as a new array, with the job that waits on the array (the merge of
// the shards) queued again behind it.
package slurm
