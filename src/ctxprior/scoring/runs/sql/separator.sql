-- What joins a context to the query in the prompts of sample ?: its dataset's separator (plan.py).
SELECT d.separator FROM sample s JOIN dataset d ON d.dataset_id = s.dataset_id WHERE s.sample_id = ?
